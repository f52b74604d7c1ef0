package commands

import "github.com/urfave/cli/v3"

// lifecycleCmds are the coder's and the code reviewer's steps.
func (e *Env) lifecycleCmds() []*cli.Command {
	return []*cli.Command{
		e.claimCmd(), e.checkpointCmd(), e.heartbeatCmd(), e.submitCmd(), e.handoffCmd(),
		e.reviewCmd(), e.verdictCmd(), e.mergeCmd(),
	}
}

// gitCmds manage worktrees, hooks and sharing.
func (e *Env) gitCmds() []*cli.Command {
	return []*cli.Command{e.worktreeCmd(), e.hooksCmd(), e.hookCmd(), e.syncCmd(), e.integrationCmd(), e.watchCmd(), e.notifyCmd(), e.analyzeCmd(), e.sprintCmd(), e.promptCmd()}
}
