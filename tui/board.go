// Package tui is git liza board: a live, full-screen view of a running
// team, built on Bubble Tea and Lip Gloss. It reads the blackboard through
// ops, as the command line does (ops.Status for the board in attention
// order, ops.Log for the latest operations), and redraws when
// refs/liza/state moves.
package tui

import (
	"context"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// Options configure the board.
type Options struct {
	Service *ops.Service
	// Interval is how often the board reads the state even when the ref
	// has not moved (leases run down, alarms start), and in remote mode
	// fetches the remote's board.
	Interval time.Duration
	Input    io.Reader
	Output   io.Writer
}

// Run shows the board until the user quits (q, Esc, Ctrl-C) or ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Interval <= 0 {
		o.Interval = 5 * time.Second
	}
	m := &model{ctx: ctx, o: o, remote: o.Service.Remote() != ""}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(o.Input), tea.WithOutput(o.Output))
	_, err := p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}

// pollRef is how often the board looks at refs/liza/state: a read of one
// small file, as a supervisor waiting for work does.
const pollRef = 250 * time.Millisecond

type (
	loadedMsg struct {
		board *ops.Board
		log   []ops.LogEntry
		tip   refstore.Hash
		err   error
	}
	pollMsg struct{}
	tickMsg struct{}
)

type model struct {
	ctx    context.Context
	o      Options
	remote bool

	board   *ops.Board
	log     []ops.LogEntry
	err     error
	tip     refstore.Hash // the state commit shown
	loading bool
	width   int
	height  int
}

func (m *model) Init() tea.Cmd {
	m.loading = true
	return tea.Batch(m.load(m.remote), poll(), tick(m.o.Interval))
}

// load reads the board. Only one load runs at a time: the Service is not
// safe for concurrent use.
func (m *model) load(fetch bool) tea.Cmd {
	svc := m.o.Service
	ctx := m.ctx
	return func() tea.Msg {
		tip, _, _ := svc.Repo.ReadRef(refstore.StateRef)
		b, err := svc.Status(ctx, ops.StatusRequest{Fetch: fetch})
		if err != nil {
			return loadedMsg{err: err, tip: tip}
		}
		log, err := svc.Log(ctx, ops.LogRequest{Max: 8})
		return loadedMsg{board: b, log: log, tip: tip, err: err}
	}
}

func poll() tea.Cmd { return tea.Tick(pollRef, func(time.Time) tea.Msg { return pollMsg{} }) }

func tick(d time.Duration) tea.Cmd { return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{} }) }

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "esc", "ctrl+c":
			return m, tea.Quit
		case "r":
			return m, m.reload(m.remote)
		}
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case loadedMsg:
		m.loading = false
		m.tip, m.err = msg.tip, msg.err
		if msg.board != nil {
			m.board, m.log = msg.board, msg.log
		}
	case pollMsg:
		cmds := []tea.Cmd{poll()}
		if cur, _, err := m.o.Service.Repo.ReadRef(refstore.StateRef); err == nil && cur != m.tip {
			cmds = append(cmds, m.reload(false))
		}
		return m, tea.Batch(cmds...)
	case tickMsg:
		return m, tea.Batch(tick(m.o.Interval), m.reload(m.remote))
	}
	return m, nil
}

// reload starts a load unless one is running.
func (m *model) reload(fetch bool) tea.Cmd {
	if m.loading {
		return nil
	}
	m.loading = true
	return m.load(fetch)
}
