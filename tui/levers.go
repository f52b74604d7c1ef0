package tui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// lever is one of the human's levers, as the board pulls it: an ordinary
// operation through ops, recorded as the operator's (the Service the
// board runs on is the command line's for a person: no agent id, the
// operator's git identity as author).
type lever struct {
	// question names what the lever does, as the confirmation asks it.
	question string
	// confirm: the lever undoes work or stops the team, and asks first.
	confirm bool
	pull    func(ctx context.Context, s *ops.Service, text string) (string, error)
}

// leverMsg is what a lever did: one line for the status line.
type leverMsg struct {
	text string
	err  bool
}

// pull runs a lever on the Service, in the background; its outcome, or
// the one-line reason it was refused, comes back as a leverMsg.
func (m *model) pull(l *lever, text string) tea.Cmd {
	svc, mu, ctx := m.o.Service, m.svc, m.ctx
	m.message, m.failed = l.question+"…", false
	return func() tea.Msg {
		if svc == nil {
			return leverMsg{text: "no blackboard", err: true}
		}
		mu.Lock()
		defer mu.Unlock()
		out, err := l.pull(ctx, svc, text)
		if err != nil {
			return leverMsg{text: "refused: " + contracts.OneLine(err.Error()), err: true}
		}
		return leverMsg{text: out}
	}
}

func pauseLever() *lever {
	return modeLever("pause the team", contracts.ModePaused, true)
}

func resumeLever() *lever {
	return modeLever("resume the team", contracts.ModeRunning, false)
}

func abortLever() *lever {
	return modeLever("ABORT the team (supervisors kill their agents)", contracts.ModeAborted, true)
}

func modeLever(q, mode string, confirm bool) *lever {
	return &lever{question: q, confirm: confirm, pull: func(ctx context.Context, s *ops.Service, _ string) (string, error) {
		out, err := s.SetMode(ctx, ops.ModeRequest{Mode: mode})
		if err != nil {
			return "", err
		}
		switch {
		case !out.Changed && mode == contracts.ModeRunning:
			return "the team is running; nothing to resume", nil
		case !out.Changed:
			return fmt.Sprintf("already %s since %s by %s", mode, out.Since, out.By), nil
		case mode == contracts.ModeRunning:
			return fmt.Sprintf("resumed (was %s)", out.From), nil
		}
		return fmt.Sprintf("%s by %s at %s", mode, out.By, out.Since), nil
	}}
}

func unblockLever(t *ops.BoardTask) *lever {
	id := t.ID
	return &lever{question: "unblock " + id + " (back to UNCLAIMED)", confirm: true,
		pull: func(ctx context.Context, s *ops.Service, _ string) (string, error) {
			out, err := s.Unblock(ctx, ops.UnblockRequest{Task: id})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s is %s", out.ID, out.Status), nil
		}}
}

// releaseLever takes the task back from whoever holds its lease: the
// reviewer of a task in review, else its coder; a lease still running is
// released by force, which the question says.
func releaseLever(t *ops.BoardTask, now time.Time) *lever {
	id, side, who := t.ID, "coder", t.AssignedTo
	if t.Status == contracts.ReadyForReview && t.ReviewingBy != "" {
		side, who = "reviewer", t.ReviewingBy
	}
	if who == "" {
		who = "nobody"
	}
	force := t.LeaseExpires != "" && !t.LeaseExpired
	q := fmt.Sprintf("release %s from its %s %s", id, side, who)
	if force {
		q += " (its lease has " + ops.LeaseLeft(t.LeaseExpires, now) + ": by force)"
	}
	return &lever{question: q, confirm: true,
		pull: func(ctx context.Context, s *ops.Service, _ string) (string, error) {
			out, err := s.Release(ctx, ops.ReleaseRequest{Task: id, Side: side, Force: force})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s is %s", out.ID, out.Status), nil
		}}
}

// noteLever leaves a note for a task or an agent ("" for everyone).
func noteLever(target string) *lever {
	q := "note for everyone"
	if target != "" {
		q = "note for " + target
	}
	return &lever{question: q, pull: func(ctx context.Context, s *ops.Service, text string) (string, error) {
		out, err := s.Note(ctx, ops.NoteRequest{Message: text, For: target})
		if err != nil {
			return "", err
		}
		if out.For != "" {
			return fmt.Sprintf("note %d added for %s", out.N, out.For), nil
		}
		return fmt.Sprintf("note %d added", out.N), nil
	}}
}
