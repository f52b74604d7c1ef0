package agent

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/transcript"
)

// transcript starts the session's log on f: its header, then each line of
// the agent's output as a record. Each step parsed from it reaches
// AgentOut as one rendered line (escaped, long text cut), never the
// agent's raw bytes.
func (s *sup) transcript(f io.Writer, ses *session, w *work, label, prompt string) *transcript.Writer {
	h := transcript.Header{Agent: s.ID, Label: label, Session: s.runs, CLI: s.cliName(),
		Format: ses.format, Started: s.Now().UTC(), Prompt: s.relPath(prompt)}
	if w.task != nil {
		h.Task = w.task.ID
	}
	tw := transcript.NewWriter(f, h, ses.format)
	if s.AgentOut != nil {
		out := s.AgentOut
		tw.OnStep(func(st transcript.Step) { fmt.Fprintln(out, transcript.Render(st, 0)) })
	}
	return tw
}

// cliName is the preset's name, or the name of the program given after --.
func (s *sup) cliName() string {
	if p := s.Launch.Preset; p != nil {
		return p.Name
	}
	if len(s.Launch.Command) > 0 {
		return filepath.Base(s.Launch.Command[0])
	}
	return ""
}

// end is the log's End record of the session: what the task history
// records of it, or for a session with no record (a planner's, one
// stopped for a newer supervisor) what happened.
func (ses *session) end() transcript.End {
	e := transcript.End{Outcome: ses.outcome, Exit: ses.exit, Detail: ses.detail,
		Seconds: int(time.Since(ses.started).Seconds())}
	if ses.started.IsZero() {
		e.Seconds = 0
	}
	if e.Outcome == "" {
		switch {
		case ses.stopped != "":
			e.Outcome, e.Detail = ops.SessionStopped, ses.stopped
		case ses.exit == 0:
			e.Outcome = ops.SessionDone
		case ses.exit == ExitRestart:
			e.Outcome = ops.SessionRestart
		default:
			e.Outcome = ops.SessionCrash
		}
	}
	return e
}
