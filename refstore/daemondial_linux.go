package refstore

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// canDialDaemon says whether dialDaemon connects here.
const canDialDaemon = true

// daemonConn is a TCP connection made with the system's calls rather than
// Go's net package (see the top of daemonlist.go), read and written
// through the runtime's poller, so that deadlines hold. It sends each
// write at once (TCP_NODELAY) and acknowledges what it reads at once
// (TCP_QUICKACK, set before every read, as the kernel clears it): the
// server's small writes are not held back waiting for a delayed
// acknowledgement.
type daemonConn struct {
	f *os.File
}

// dialDaemon connects to addr by ctx's deadline.
func dialDaemon(ctx context.Context, addr netip.AddrPort) (*daemonConn, error) {
	family, sa := unix.AF_INET, unix.Sockaddr(nil)
	if addr.Addr().Is4() {
		sa = &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(addr.Port()), Addr: addr.Addr().As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := unix.Connect(fd, sa); err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	// Non-blocking, the file is read and written through the poller.
	c := &daemonConn{f: os.NewFile(uintptr(fd), "git daemon "+addr.String())}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(daemonTimeout)
	}
	if err := c.f.SetDeadline(deadline); err != nil {
		c.Close()
		return nil, err
	}
	// The connection is made when SO_ERROR says no error and the socket
	// has a peer; until then it waits for the socket to become writable.
	// (The check comes first: a connection made before the file was
	// registered with the poller gives no edge to wait for.)
	rc, err := c.f.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	var soErr error
	if err := rc.Write(func(fd uintptr) bool {
		n, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		if err == nil && n != 0 {
			err = unix.Errno(n)
		}
		if err != nil {
			soErr = err
			return true
		}
		_, err = unix.Getpeername(int(fd))
		return err == nil
	}); err != nil {
		c.Close()
		return nil, err
	}
	if soErr != nil {
		c.Close()
		return nil, os.NewSyscallError("connect", soErr)
	}
	return c, nil
}

func (c *daemonConn) Read(p []byte) (int, error) {
	if rc, err := c.f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1) })
	}
	return c.f.Read(p)
}

func (c *daemonConn) Write(p []byte) (int, error) { return c.f.Write(p) }

func (c *daemonConn) Close() error { return c.f.Close() }
