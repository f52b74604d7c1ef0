package agent

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/transcript"
	"github.com/liza-dev/git-liza/worktree"
)

// transcript starts the session's log on f: its header, then each line of
// the agent's output as a record. Each step parsed from it reaches
// AgentOut as one rendered line (escaped, long text cut), never the
// agent's raw bytes. dir is where the agent works: a task's header says
// what readied its worktree (worktree.PreparedLines).
func (s *sup) transcript(f io.Writer, ses *session, w *work, dir, label, prompt string) *transcript.Writer {
	h := transcript.Header{Agent: s.ID, Label: label, Session: s.runs, CLI: s.cliName(),
		Format: ses.format, Started: s.Now().UTC(), Prompt: s.relPath(prompt)}
	if w.task != nil {
		h.Task = w.task.ID
		h.Prepared = worktree.PreparedLines(dir)
	}
	tw := transcript.NewWriter(f, h, ses.format)
	if ses.format != transcript.FormatText {
		ses.stall = transcript.NewStall(ses.format, s.stallAfter())
	}
	out, stall := s.AgentOut, ses.stall
	tw.OnStep(func(st transcript.Step) {
		stall.Step(st, time.Now())
		if out != nil {
			fmt.Fprintln(out, transcript.Render(st, 0))
		}
	})
	return tw
}

// StallAfter is how long a session may do nothing but retry a failure of
// its environment before the supervisor stops it as failed for that
// environment (transcript.Stall): longer than the CLIs' own retries of a
// request (Claude Code's ten take about two and a half minutes, and then
// it exits), shorter than any timebox.
const StallAfter = 5 * time.Minute

func (s *sup) stallAfter() time.Duration {
	if s.Config.StallAfter > 0 {
		return s.Config.StallAfter
	}
	return StallAfter
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

// lastWords is what a failure quotes of a session's output: its last
// lines, or for a CLI's stream the last tool error, else the last error
// the CLI reported, else the model's last text (transcript.Summary.Quote),
// which says what it is.
type lastWords struct {
	text   string
	quoted bool // text is a labelled quote of the stream
}

// lastOutput is what a failure quotes of the session's output, read once:
// it is called after the agent's output has ended.
func (ses *session) lastOutput() lastWords {
	if !ses.tailRead {
		ses.tailRead = true
		if ses.format != transcript.FormatText && ses.tw != nil {
			if q := ses.tw.Summary().Quote(); q != "" {
				ses.tail = lastWords{text: q, quoted: true}
				return ses.tail
			}
		}
		ses.tail = lastWords{text: ses.out.lastLines(crashLines)}
	}
	return ses.tail
}

// withOutput adds the last words of the agent's output, if any, to what a
// failure says.
func withOutput(what string, tail lastWords) string {
	switch {
	case tail.text == "":
	case tail.quoted:
		what += "; " + tail.text
	default:
		what += "; last output:\n" + tail.text
	}
	return what
}
