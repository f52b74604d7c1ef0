package agent

import (
	"fmt"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/transcript"
)

// Event kinds: what a supervisor says it did or saw. `git liza run` shows
// them one line each and, with --json, hands them to other tools.
const (
	EventStarted           = "started"            // the supervisor registered and is looking for work
	EventClaimed           = "claimed"            // it claimed a task for its coder
	EventReviewing         = "reviewing"          // it took a review for its reviewer
	EventResumed           = "resumed"            // it renewed the lease on work it held before
	EventWake              = "wake"               // the planner is woken
	EventSessionStarted    = "session_started"    // an agent session started
	EventSessionEnded      = "session_ended"      // an agent session ended (Msg says how)
	EventSubmitted         = "submitted"          // the session moved its task
	EventIdle              = "idle"               // the session ended without moving its task
	EventCrashed           = "crashed"            // the agent crashed; the supervisor backs off
	EventTimebox           = "timebox"            // the session reached its timebox
	EventCannotStart       = "cannot_start"       // the agent could not be started; backing off
	EventCrashLoop         = "crash_loop"         // too many crashes or failed starts: stopping
	EventMerged            = "merged"             // the reviewer merged a task
	EventIntegrationFailed = "integration_failed" // a merge failed or the lane is held
	EventCompleted         = "completed"          // the goal and sprint were completed
	EventWaiting           = "waiting"            // the board cannot be read or synced, no task can be claimed
	EventNoWork            = "no_work"            // nothing to do for now (run shows it only with --json)
	EventPaused            = "paused"             // PAUSED or CHECKPOINT: waiting for the operator
	EventStopping          = "stopping"           // ABORT, or the goal is completed
	EventStopped           = "stopped"            // the supervisor unregistered
	EventError             = "error"              // an operation failed; the supervisor goes on
	EventInfo              = "info"               // anything else
)

// Event is one line of a supervisor's output.
type Event struct {
	T     time.Time `json:"t"`
	Agent string    `json:"agent"`
	Kind  string    `json:"kind"`
	Task  string    `json:"task,omitempty"`
	Msg   string    `json:"msg"`
	// Step is set on run's step events (--follow, -v): a step of the
	// agent's session, which Msg renders.
	Step *transcript.Step `json:"step,omitempty"`
}

// Line is the event as a person reads it: its time (the clock's, on the
// supervisor's machine) and its message, made printable.
func (e Event) Line() string {
	return e.T.Format("15:04:05") + " " + contracts.PrintableText(e.Msg)
}

// eventf reports an event of kind about task ("" for none): to
// Config.Events when set, else as a readable line to Config.Log.
func (s *sup) eventf(kind, task string, format string, args ...any) {
	e := Event{T: s.Now(), Agent: s.ID, Kind: kind, Task: task, Msg: fmt.Sprintf(format, args...)}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.Events != nil {
		// A person reads run's lines beside the repository: its root is
		// left out of the paths they name.
		if s.Root != "" {
			e.Msg = strings.ReplaceAll(e.Msg, s.Root+"/", "")
		}
		s.Events(e)
		return
	}
	fmt.Fprintf(s.Log, "%s %s\n", e.T.Format("15:04:05"), e.Msg)
}

// logf reports an event of no particular kind.
func (s *sup) logf(format string, args ...any) { s.eventf(EventInfo, "", format, args...) }

// sessionStarted reports the start of the supervisor's session number
// s.runs, for label (a task id, or "planning"), whose output goes to log:
// one short line naming the CLI and the log relative to the project root.
func (s *sup) sessionStarted(label, log string) {
	task := label
	if label == "planning" {
		task = ""
	}
	cli := s.cliName()
	if cli == "" {
		cli = "agent"
	}
	s.eventf(EventSessionStarted, task, "%s: %s session %d started (log %s)", label, cli, s.runs, s.relPath(log))
}

// taskOf is the id of w's task, "" for a planner's work.
func taskOf(w *work) string {
	if w == nil || w.task == nil {
		return ""
	}
	return w.task.ID
}
