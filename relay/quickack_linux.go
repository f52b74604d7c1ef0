package relay

import (
	"net"
	"syscall"
)

// tcpQuickAck is Linux's TCP_QUICKACK, which the kernel clears again by
// itself: it is set before every read.
const tcpQuickAck = 12

func quickAck(tc *net.TCPConn) {
	raw, err := tc.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpQuickAck, 1)
	})
}
