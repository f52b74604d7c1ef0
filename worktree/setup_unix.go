//go:build unix

package worktree

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd the leader of a process group of its own, so that a
// setup killed at its timeout takes everything it started with it.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group cmd leads.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
