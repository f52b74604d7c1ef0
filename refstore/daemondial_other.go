//go:build !linux

package refstore

import (
	"context"
	"errors"
	"net/netip"
)

// canDialDaemon says whether dialDaemon connects here: not on this
// system, where git lists a daemon's refs (see daemonlist.go).
const canDialDaemon = false

type daemonConn struct{}

func dialDaemon(context.Context, netip.AddrPort) (*daemonConn, error) {
	return nil, errors.New("not on this system")
}

func (c *daemonConn) Read([]byte) (int, error)  { return 0, errors.New("not on this system") }
func (c *daemonConn) Write([]byte) (int, error) { return 0, errors.New("not on this system") }
func (c *daemonConn) Close() error              { return nil }
