package ops

import (
	"context"
	"fmt"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// The outcomes of an agent session, as SessionEnded records them.
const (
	SessionDone     = "done"     // exited 0 and moved its task on
	SessionIdle     = "idle"     // exited 0 without submitting, blocking or handing off
	SessionRestart  = "restart"  // exited 42: start again at once
	SessionCrash    = "crash"    // any other exit
	SessionTimebox  = "timebox"  // stopped at the end of its timebox
	SessionStopped  = "stopped"  // stopped by its supervisor (ABORT, shutdown, replaced)
	SessionNoStart  = "no_start" // could not be started
	SessionEventTag = "session_ended"
)

// SessionRequest records the end of one agent session on its task.
type SessionRequest struct {
	Call
	Task    string
	Outcome string // one of the Session* outcomes
	Exit    int    // the exit status; -1 when there was none
	Seconds int    // how long it ran
	// Log is the file that holds the session's output.
	Log string
	// Detail says more: why it crashed, its timebox, its last lines.
	Detail string
}

// SessionEnded appends a session_ended event to the task's history: which
// agent ran, how it ended, and the log file of its output, so that the
// task's history says what happened in every session, and where to read
// it. It is a supervisor's step, written under its registration.
func (s *Service) SessionEnded(ctx context.Context, r SessionRequest) (Written, error) {
	if s.Agent == "" {
		return Written{}, contracts.Invalidf("a session is recorded for an agent (--agent or LIZA_AGENT_ID)")
	}
	if err := contracts.ValidTaskID(r.Task); err != nil {
		return Written{}, err
	}
	switch r.Outcome {
	case SessionDone, SessionIdle, SessionRestart, SessionCrash, SessionTimebox, SessionStopped, SessionNoStart:
	default:
		return Written{}, contracts.Invalidf("unknown session outcome %q", r.Outcome)
	}
	agent := s.Agent
	res, err := s.update(ctx, r.Call, cas.Op{Name: contracts.OpRegister, Apply: func(tx *cas.Tx) (any, error) {
		t, err := tx.MustTask(r.Task)
		if err != nil {
			return nil, err
		}
		ev := &contracts.HistoryEvent{Time: tx.NowString(), Event: SessionEventTag, Agent: agent,
			Reason: clipText(r.Detail, 2000), Extra: contracts.Extra{"outcome": r.Outcome}}
		if r.Exit >= 0 {
			ev.Extra["exit"] = r.Exit
		}
		if r.Seconds > 0 {
			ev.Extra["seconds"] = r.Seconds
		}
		if r.Log != "" {
			ev.Extra["log"] = r.Log
		}
		t.History = append(t.History, ev)
		tx.PutTask(t)
		tx.Describe(fmt.Sprintf("session of %s on %s: %s", agent, t.ID, r.Outcome), t.ID)
		return nil, nil
	}})
	if err != nil {
		return Written{}, err
	}
	return written(res), nil
}

// clipText keeps the last n bytes of s, on a rune boundary: the end of an
// agent's output is what explains how it ended.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for i := 0; i < len(s) && i < 4; i++ {
		if s[i]&0xC0 != 0x80 {
			return "…" + s[i:]
		}
	}
	return "…" + s
}
