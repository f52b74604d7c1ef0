//go:build !linux

package proc

import (
	"os"
	"syscall"
)

// DieWithParent does nothing here: only Linux has a parent-death signal.
// A child given its parent's pid watches for it instead (WatchParent).
func DieWithParent(*syscall.SysProcAttr) {}

// OnClosed does nothing here: a closed output is learnt of when a write
// to it fails.
func OnClosed(*os.File, func()) (stop func()) { return func() {} }
