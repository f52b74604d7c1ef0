//go:build !unix

package agent

import (
	"os"
	"os/exec"
	"syscall"
)

func ownGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		if sig == sigKill {
			_ = cmd.Process.Kill()
			return
		}
		_ = cmd.Process.Signal(os.Interrupt)
	}
}

const (
	sigInt  = syscall.SIGINT
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
