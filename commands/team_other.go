//go:build !unix

package commands

import (
	"os/exec"
	"syscall"
)

// ownGroup: no process groups here (run is refused on Windows: see
// supervisorsRefused).
func ownGroup(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{} }
