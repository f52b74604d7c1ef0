package agent

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// pauseStop starts the reason of a session stopped by git liza pause
// --stop-sessions.
const pauseStop = "stopped by pause"

// stopSessions stops the running session when st is a pause that asks
// for it (git liza pause --stop-sessions), as a timebox does: the agent is
// asked to stop (SIGINT) and made to after grace (SIGTERM, then SIGKILL).
// A coder's task then gets a handoff, unless one is pending already, so
// that the session after resume continues from the worktree. It returns
// why the session stopped, or "" when st asks nothing of it; the caller
// records the session as stopped with that reason.
func (s *sup) stopSessions(ctx context.Context, st *contracts.State, cmd *exec.Cmd, done chan error, grace time.Duration) string {
	if !contracts.StopSessions(st.Control) {
		return ""
	}
	why := fmt.Sprintf("%s at %s", pauseStop, st.Control.Since)
	s.interrupt(cmd, done, grace, EventInfo, "the team is paused with --stop-sessions")
	if s.Role != contracts.RoleCoder {
		return why
	}
	for _, t := range st.Tasks {
		if t == nil || t.AssignedTo != s.ID || t.Status != contracts.Claimed || t.HandoffPending {
			continue
		}
		r := ops.HandoffRequest{Task: t.ID,
			Summary: why + "; the work so far is in the worktree (its commits, and what is not committed yet)",
			Next:    "continue the task from the worktree (git log, git status); the session was interrupted, not finished"}
		if err := s.do(func() error { _, err := s.Board.Handoff(context.WithoutCancel(ctx), r); return err }); err != nil {
			s.logf("record a handoff on %s: %v", t.ID, err)
		}
	}
	return why
}
