package transcript

import (
	"sync"
	"time"
)

// Stall tells, while a session runs, that it has done nothing for a while
// but report a failure of its environment and retry: codex 0.169.0 whose
// endpoint does not answer prints "Reconnecting... waiting for network"
// for as long as it is left to, and would hold its task until the
// timebox. Classify reads a session that ended; Stall is for one that
// does not end.
//
// Only the CLI's own error events count, as for Classify: the model's
// text, a tool's result and stderr (which an agent's commands share) are
// progress or nothing, never a retry. A plain command's output is never
// read.
type Stall struct {
	mu     sync.Mutex
	format string
	after  time.Duration
	since  time.Time // the first retry since the last progress; zero when none
	last   *Failure  // the failure the last retry reported
}

// NewStall watches a session of the format, which is stalled once it has
// only retried a failure of its environment for after.
func NewStall(format string, after time.Duration) *Stall {
	return &Stall{format: format, after: after}
}

// Step takes a step of the session as it is parsed, at now.
func (s *Stall) Step(st Step, now time.Time) {
	if s == nil || s.format == FormatText {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st.Kind {
	case KindStart, KindText, KindTool, KindResult, KindUsage:
		s.since, s.last = time.Time{}, nil
	case KindError:
		f := retried(s.format, st)
		if f == nil {
			return
		}
		if s.since.IsZero() {
			s.since = now
		}
		s.last = f
	}
}

// Check returns the failure once the session has done nothing but retry
// it for the whole wait, at now; else nil.
func (s *Stall) Check(now time.Time) *Failure {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil || now.Sub(s.since) < s.after {
		return nil
	}
	f := *s.last
	return &f
}

// retried is the failure of the environment an error event of the CLI
// reports, or nil.
func retried(format string, st Step) *Failure {
	if st.Failure != nil {
		return st.Failure
	}
	switch format {
	case FormatClaude:
		if st.Code != "" {
			return claudeFailure(st.Code, st.Text)
		}
	case FormatCodex:
		return codexFailure(st.Text)
	case FormatGemini:
		return geminiFailure(st.Text, nil)
	}
	return nil
}
