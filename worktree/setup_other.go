//go:build !unix

package worktree

import "os/exec"

func ownGroup(cmd *exec.Cmd) {}

// killGroup kills the setup's own process (no process groups here).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
