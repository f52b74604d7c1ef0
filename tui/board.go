// Package tui is git liza board: an interactive, full-screen view of a
// running team, built on Bubble Tea and Lip Gloss. It reads the blackboard
// through ops, as the command line does (ops.Status for the board in
// attention order, ops.Log for the latest operations, ops.Task for a
// task's detail), redraws when refs/liza/state moves, and pulls the
// human's levers (pause, resume, abort, note, unblock, release) through
// the same ops functions as the command line, as the operator.
package tui

import (
	"context"
	"io"
	"sync"
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

// Run shows the board until the user quits (q, Ctrl-C) or ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Interval <= 0 {
		o.Interval = 5 * time.Second
	}
	m := newModel(ctx, o)
	defer m.stopTail()
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(o.Input), tea.WithOutput(o.Output))
	_, err := p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}

// pollRef is how often the board looks at refs/liza/state: a read of one
// small file, as a supervisor waiting for work does. The same tick
// redraws a session being followed.
const pollRef = 250 * time.Millisecond

type (
	loadedMsg struct {
		board *ops.Board
		log   []ops.LogEntry
		ready []string
		tip   refstore.Hash
		took  time.Duration // how long the read took
		err   error
	}
	pollMsg struct{}
	tickMsg struct{}
	// fetchedMsg is a fetch of the remote's board done (fetch).
	fetchedMsg struct{ err error }
)

// section is a part of the board the cursor moves in.
type section int

const (
	secTasks section = iota
	secAgents
	nSections
)

// screen is what fills the window.
type screen int

const (
	scrBoard  screen = iota
	scrDetail        // the selected task: its detail, and its session's tail
	scrLog           // the selected agent's session, followed
)

type model struct {
	ctx    context.Context
	o      Options
	remote bool
	// svc serializes the board's use of the Service, which is not safe
	// for concurrent use: loads, the detail's reads and levers run as
	// commands, each on a goroutine of its own.
	svc *sync.Mutex

	board   *ops.Board
	log     []ops.LogEntry
	err     error
	tip     refstore.Hash // the state commit shown
	loading bool
	// fetching: a fetch of the remote's board (fetch) is under way.
	fetching bool
	// loadedAt and loadTook are when the last read ended and how long it
	// took.
	loadedAt time.Time
	loadTook time.Duration
	width    int
	height   int

	rows      rows
	rowsBoard *ops.Board // the board rows were built from
	index     *boardIndex
	ready     []string // ops.ReadyIDs with the board; nil when unknown
	filter    string   // text the tasks are filtered by (/)
	group     string   // status group shown alone (s): a status, groupReady or ""

	focus  section
	cursor [nSections]int
	top    [nSections]int // first line shown of each section

	screen screen
	detail *detail
	scroll int // first line shown of the detail
	tail   *tail
	// logAgent is the agent whose session scrLog follows; logNote says
	// why none is followed.
	logAgent, logNote string

	prompt  *prompt // a text being typed (filter, note), or a confirmation
	message string  // the last lever's outcome, one line
	failed  bool    // message is a refusal
	help    bool
}

func newModel(ctx context.Context, o Options) *model {
	return &model{ctx: ctx, o: o, remote: o.Service != nil && o.Service.Remote() != "", svc: &sync.Mutex{}}
}

func (m *model) Init() tea.Cmd {
	m.loading = true
	return tea.Batch(m.load(m.remote), poll(), tick(m.o.Interval))
}

// load reads the board.
func (m *model) load(fetch bool) tea.Cmd {
	svc, mu, ctx := m.o.Service, m.svc, m.ctx
	// What a coder could claim now is read only while the ready group is
	// shown: on a large board it costs about as much as the board itself.
	withReady := m.group == groupReady
	return func() tea.Msg {
		mu.Lock()
		defer mu.Unlock()
		start := time.Now()
		tip, _, _ := svc.Repo.ReadRef(refstore.StateRef)
		b, err := svc.Status(ctx, ops.StatusRequest{Fetch: fetch})
		if err != nil {
			return loadedMsg{err: err, tip: tip, took: time.Since(start)}
		}
		log, err := svc.Log(ctx, ops.LogRequest{Max: 8})
		var ready []string
		if withReady {
			// In claim order; nil when it cannot be said (the ready group
			// then falls back to UNCLAIMED tasks waiting on nothing).
			r, rerr := svc.ReadyIDs(ctx)
			if rerr == nil {
				ready = append([]string{}, r...)
			}
		}
		return loadedMsg{board: b, log: log, ready: ready, tip: tip, err: err, took: time.Since(start)}
	}
}

func poll() tea.Cmd { return tea.Tick(pollRef, func(time.Time) tea.Msg { return pollMsg{} }) }

func tick(d time.Duration) tea.Cmd { return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{} }) }

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return m, tea.Batch(m.key(msg), m.preview())
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, m.preview()
	case previewMsg:
		if t := m.selectedTask(); t != nil && t.ID == msg.id && m.screen == scrBoard && m.wide() {
			if m.detail == nil || m.detail.id != msg.id {
				m.detail = &detail{id: msg.id, loading: true}
			}
			return m, m.loadDetail(msg.id)
		}
	case loadedMsg:
		m.loading = false
		m.loadedAt, m.loadTook = time.Now(), msg.took
		m.tip, m.err = msg.tip, msg.err
		if msg.board != nil {
			m.setBoard(msg.board, msg.log, msg.ready)
			if t := m.selectedTask(); m.screen == scrBoard && m.wide() && t != nil && m.detail != nil && m.detail.id == t.ID {
				return m, m.loadDetail(t.ID)
			}
			if m.detail != nil && m.screen == scrDetail {
				// The task may have moved: read its detail again.
				return m, m.loadDetail(m.detail.id)
			}
			if m.screen == scrLog && (m.tail == nil || m.tail.done()) {
				// The agent may have started another session.
				return m, m.findAgentLog(m.logAgent)
			}
			return m, m.preview()
		}
	case detailMsg:
		if m.detail != nil && msg.d.id == m.detail.id {
			m.detail = msg.d
			if m.screen == scrDetail && msg.d.session != nil && (m.tail == nil || m.tail.path != msg.d.session.Path) {
				m.startTail(*msg.d.session)
			}
		}
	case agentLogMsg:
		if m.screen == scrLog && msg.agent == m.logAgent {
			switch {
			case msg.session != nil && m.tail != nil && m.tail.path == msg.session.Path:
				// Still the latest: it goes on being shown.
			case msg.session != nil:
				m.startTail(*msg.session)
			case msg.err != nil:
				m.logNote = "the session logs cannot be read: " + msg.err.Error()
			default:
				m.logNote = "no session of " + msg.agent + " yet: its supervisor writes one per run"
			}
		}
	case tea.PasteMsg:
		if m.prompt != nil && m.prompt.kind != askConfirm {
			m.typed(msg.Content)
		}
	case leverMsg:
		m.message, m.failed = msg.text, msg.err
		return m, m.reload(false)
	case pollMsg:
		cmds := []tea.Cmd{poll()}
		if m.o.Service != nil {
			// A board that takes long to read (10,000 tasks: 1.4 s) is
			// read again at most once per twice that time, so that a busy
			// team's stream of operations does not keep a core reading.
			if cur, _, err := m.o.Service.Repo.ReadRef(refstore.StateRef); err == nil && cur != m.tip && time.Since(m.loadedAt) >= 2*m.loadTook {
				cmds = append(cmds, m.reload(false))
			}
		}
		return m, tea.Batch(cmds...)
	case tickMsg:
		switch {
		case time.Since(m.loadedAt) >= max(m.o.Interval, quietReads*m.loadTook):
			return m, tea.Batch(tick(m.o.Interval), m.reload(m.remote))
		case m.remote && !m.fetching:
			// The remote's board is fetched at every tick (one fetch at a
			// time): the poll reads it once it has moved the state here.
			m.fetching = true
			return m, tea.Batch(tick(m.o.Interval), m.fetch())
		}
		return m, tick(m.o.Interval)
	case fetchedMsg:
		m.fetching = false
		if msg.err != nil {
			m.err = msg.err
		}
	}
	return m, nil
}

// quietReads is how many reads' time a board whose state has not moved
// waits before a tick reads it again, for what the clock changes alone (a
// lease that runs out raises an alarm and moves its task up; the time
// left is drawn at each redraw). A board read in 20 ms is read at
// every tick; one of 50,000 tasks, read in about 0.8 s of a core, every
// 16 s rather than every 5, when nothing moved on it.
const quietReads = 20

// fetch brings the remote's board here (ops.Service.Refresh), without
// reading it.
func (m *model) fetch() tea.Cmd {
	svc, mu, ctx := m.o.Service, m.svc, m.ctx
	if svc == nil {
		return nil
	}
	return func() tea.Msg {
		mu.Lock()
		defer mu.Unlock()
		return fetchedMsg{err: svc.Refresh(ctx)}
	}
}

// setBoard shows a board read anew, the cursor kept on the task (and the
// agent) it was on when they are still listed.
func (m *model) setBoard(b *ops.Board, log []ops.LogEntry, ready []string) {
	task, agent := m.selectedTask(), m.selectedAgent()
	m.board, m.log, m.ready = b, log, ready
	m.refilter()
	if task != nil {
		m.selectTask(task.ID)
	}
	if agent != nil {
		for i, a := range b.Agents {
			if a.ID == agent.ID {
				m.cursor[secAgents] = i
			}
		}
	}
	m.clamp()
}

// refilter rebuilds the task rows after the board, the filter or the
// group changed.
func (m *model) refilter() {
	if m.index == nil || m.index.board != m.board {
		m.index = indexBoard(m.board, m.ready)
	}
	m.rows, m.rowsBoard = buildRows(m.index, m.filter, m.group), m.board
	m.clamp()
}

func (m *model) selectTask(id string) {
	for i, t := range m.rows.tasks {
		if t.ID == id {
			m.cursor[secTasks] = i
			return
		}
	}
}

// clamp keeps the cursors on the lists.
func (m *model) clamp() {
	n := [nSections]int{len(m.rows.tasks), 0}
	if m.board != nil {
		n[secAgents] = len(m.board.Agents)
	}
	for s := range nSections {
		m.cursor[s] = max(0, min(m.cursor[s], n[s]-1))
	}
}

func (m *model) selectedTask() *ops.BoardTask {
	if i := m.cursor[secTasks]; i >= 0 && i < len(m.rows.tasks) {
		return m.rows.tasks[i]
	}
	return nil
}

func (m *model) selectedAgent() *ops.BoardAgent {
	if m.board == nil {
		return nil
	}
	if i := m.cursor[secAgents]; i >= 0 && i < len(m.board.Agents) {
		return &m.board.Agents[i]
	}
	return nil
}

// reload starts a load unless one is running.
func (m *model) reload(fetch bool) tea.Cmd {
	if m.loading || m.o.Service == nil {
		return nil
	}
	m.loading = true
	return m.load(fetch)
}
