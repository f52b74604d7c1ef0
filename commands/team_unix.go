//go:build unix

package commands

import (
	"os/exec"
	"syscall"
)

// ownGroup puts a supervisor in a process group of its own, so that a
// Ctrl-C at the terminal reaches run alone, which stops each supervisor in
// turn.
func ownGroup(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
