// Package relay is git-liza-relay: the program git runs, as its
// GIT_PROXY_COMMAND, for the git:// connections of git-liza's fetches and
// pushes. It copies bytes between git and the server and changes nothing
// in them; what it changes is how the connection sends them.
//
// git writes a request as many small packets (one write per pkt-line) and
// does not turn off Nagle's algorithm on a git:// socket; the server holds
// its acknowledgement back for up to 40 ms (delayed ACK) waiting for the
// rest of the request, which Nagle holds back until that acknowledgement
// comes. Every exchange of the protocol then waits about 40 ms, on
// loopback as on a network: a ref listing took 53 ms and an operation on a
// hub (a fetch and a push) 165 ms, of which the processes used about 30.
// The relay's socket sends at once (TCP_NODELAY) and, where the system has
// it, acknowledges at once (TCP_QUICKACK), so that the server's own small
// writes are not held either.
package relay

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Program is the relay's program name.
const Program = "git-liza-relay"

// dialTimeout bounds the connection's set-up; the transfer itself is
// bounded by git, which ends the relay by closing its pipes.
const dialTimeout = 30 * time.Second

// Main relays between stdin/stdout and host:port, as git's proxy command
// is called: with the host and the port as its two arguments. It returns
// the exit code.
func Main(args []string, stdin io.Reader, stdout io.Writer, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintf(stderr, "%s: usage: %s HOST PORT (git runs it as its proxy command for git:// URLs)\n", Program, Program)
		return 2
	}
	addr, err := address(args[0], args[1])
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Program, err)
		return 2
	}
	conn, err := net.DialTimeout("tcp", addr, dialTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Program, err)
		return 1
	}
	tc := conn.(*net.TCPConn)
	defer tc.Close()
	_ = tc.SetNoDelay(true)
	if err := pipe(tc, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Program, err)
		return 1
	}
	return 0
}

// address checks what git passed: a host name or address without spaces
// or control characters, and a port number.
func address(host, port string) (string, error) {
	if host == "" || len(host) > 255 || strings.ContainsFunc(host, func(r rune) bool { return r <= ' ' || r == 0x7f }) || strings.HasPrefix(host, "-") {
		return "", fmt.Errorf("not a host: %q", host)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("not a port: %q", port)
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port), nil
}

// pipe copies git's requests to the server and the server's answers back
// until the server closes the connection. When git has sent everything,
// the relay half-closes the socket, as git's own connection would when
// its command ends.
func pipe(tc *net.TCPConn, stdin io.Reader, stdout io.Writer) error {
	go func() {
		// An error here (git gone, the server gone) ends the read below too.
		_, _ = io.Copy(tc, stdin)
		_ = tc.CloseWrite()
	}()
	buf := make([]byte, 64<<10)
	for {
		quickAck(tc)
		n, err := tc.Read(buf)
		if n > 0 {
			if _, werr := stdout.Write(buf[:n]); werr != nil {
				// git stopped reading: it has what it wanted.
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
