package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/transcript"
)

// tail follows a session log as git liza logs -f does (transcript.Follow,
// a step a line through transcript.Render, which escapes what the agent
// wrote), keeping its last maxTail lines. It runs on a goroutine of its
// own until the session ends or the board stops following it; the board
// redraws from it on its poll tick.
type tail struct {
	path   string
	head   string
	cancel context.CancelFunc

	mu    sync.Mutex
	lines []string
	ended bool
	err   error
}

// maxTail is how many of a session's lines the board keeps: a long
// session's steps are not all held in memory.
const maxTail = 500

// stepWidth is how much of a step's text a line shows, as in logs.
const stepWidth = 160

func (m *model) startTail(s transcript.Session) {
	m.stopTail()
	ctx, cancel := context.WithCancel(m.ctx)
	h := s.Header
	t := &tail{path: s.Path, cancel: cancel,
		head: fmt.Sprintf("session of %s on %s, %s session %d, started %s", p(h.Agent), p(h.Label), p(h.CLI), h.Session,
			h.Started.UTC().Format("2006-01-02 15:04:05Z"))}
	m.tail = t
	go t.follow(ctx)
}

func (m *model) stopTail() {
	if m.tail != nil {
		m.tail.cancel()
		m.tail = nil
	}
}

func (t *tail) follow(ctx context.Context) {
	var parser *transcript.Parser
	err := transcript.Follow(ctx, t.path, func(r transcript.Record) {
		if r.Header != nil {
			parser = transcript.NewParser(r.Header.Format)
			return
		}
		if parser == nil {
			return
		}
		for _, st := range parser.Record(r) {
			t.add(st.T.UTC().Format("15:04:05") + " " + transcript.Render(st, stepWidth))
		}
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	if err != nil && !errors.Is(err, context.Canceled) {
		t.err = err
	}
}

func (t *tail) add(l string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, l)
	if len(t.lines) > 2*maxTail {
		t.lines = append(t.lines[:0], t.lines[len(t.lines)-maxTail:]...)
	}
}

// last is the last n lines followed, and a line saying where the
// session is: followed, ended, unreadable.
func (t *tail) last(n int) (lines []string, state string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	state = "following"
	switch {
	case t.err != nil:
		state = "unreadable: " + contracts.Printable(contracts.OneLine(t.err.Error()))
	case t.ended:
		state = "ended"
	}
	start := max(0, len(t.lines)-n)
	return append([]string(nil), t.lines[start:]...), state
}

// done says the session followed has ended (or cannot be read).
func (t *tail) done() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ended
}

// openAgentLog follows the latest session of an agent.
func (m *model) openAgentLog(agent string) tea.Cmd {
	m.stopTail()
	m.detail = nil
	m.logAgent, m.logNote = agent, ""
	return m.findAgentLog(agent)
}

// findAgentLog looks for the latest session of an agent.
func (m *model) findAgentLog(agent string) tea.Cmd {
	if m.o.Service == nil {
		return nil
	}
	dir := m.sessionsDir()
	return func() tea.Msg {
		all, err := transcript.List(dir)
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].Header.Agent == agent {
				return agentLogMsg{agent: agent, session: &all[i]}
			}
		}
		return agentLogMsg{agent: agent, err: err}
	}
}

type agentLogMsg struct {
	agent   string
	session *transcript.Session
	err     error
}
