//go:build unix

package agent

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd the leader of a new process group, so that the whole
// tree an agent CLI starts can be signalled at once.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group cmd leads.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}

const (
	sigInt  = syscall.SIGINT
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
