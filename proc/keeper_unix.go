//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// groups says whether this system has process groups to keep.
const groups = true

// ownGroup puts cmd in a process group of its own, out of reach of a
// signal sent to this process's group.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
