//go:build !linux

package relay

import "net"

// quickAck does nothing where the system has no TCP_QUICKACK.
func quickAck(*net.TCPConn) {}
