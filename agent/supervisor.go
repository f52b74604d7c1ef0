// Package agent is the supervisor that runs one agent CLI for one Liza
// role: it waits for work, claims it before the agent starts, builds the
// role's prompt, runs the agent in its own process group, keeps its leases
// alive, and handles its exit, the kill switches and crash loops. It acts
// on the blackboard through the operations of package ops, with typed
// requests and results.
package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

var _ Board = (*ops.Service)(nil)

// Exit codes of an agent session (seed 004).
const (
	ExitDone    = 0  // the session finished its work
	ExitRestart = 42 // graceful abort: start again at once
)

// Crash-loop rule (seed 000): this many crashes within the window stop
// the supervisor. Failures to start the agent follow the same rule, counted
// apart, since they are not the task's fault.
const (
	CrashLimit  = 3
	CrashWindow = 5 * time.Minute
)

// MaxRetryDelay bounds the delay between two tries of a merge that keeps
// failing without changing the board.
const MaxRetryDelay = 5 * time.Minute

// ErrStale is returned when a newer registration of the same agent id
// has replaced this supervisor.
var ErrStale = errors.New("replaced by a newer supervisor")

// ErrCrashLoop is returned when the agent crashed CrashLimit times within
// CrashWindow.
var ErrCrashLoop = errors.New("crash loop")

// ErrCannotStart is returned when the agent could not be started
// CrashLimit times within CrashWindow: its command or its directory is
// missing on this machine.
var ErrCannotStart = errors.New("cannot start the agent")

// ErrGaveUp is returned when a reviewer's agent ended IdleLimit sessions in
// a row without a verdict: its review is released for another reviewer.
var ErrGaveUp = errors.New("gave up a review")

// sup is a running supervisor.
type sup struct {
	Config
	mu     sync.Mutex // serialises Board calls (the loop and keepAlive share the board)
	logged string     // the last waiting message, printed once
	// toldLogsMax: the repository's liza.sessionLogsMax, ignored, was said.
	toldLogsMax bool
	tidied      time.Time // when tidy last ran
	crashes     []time.Time
	startFails  []time.Time
	idles       map[string]int // by task: sessions in a row that ended without moving it
	unfinished  map[string]int // by task: sessions in a row that ended without finishing it, committed or not
	seen        string         // fingerprint of the planning context last handed to the planner
	runs        int
	env         envTrack          // sessions that failed for their environment (envfail.go)
	setup       setupWait         // the wait after a new worktree's setup failed (setup.go)
	lane        mergeLane         // the reviewer's merges, beside its reviews
	waits       holds             // the remote not answering, the disk full (hold.go)
	screened    map[string]string // by task: what its merge check last merged onto (screen.go)
	viewMu      sync.Mutex        // the loop and keepAlive both read the board
	view        cas.View          // the board, read once and then by what changed
	logMu       sync.Mutex        // the loop, keepAlive and the merge lane all log
	lastRead    time.Time         // when the loop last read the board
	// waitOn, when set, are the files of the board (logical paths) whose
	// change is what this supervisor waits for (a coder's task under
	// review, its agent): while they and liza.yaml stay the same, a move
	// of the board does not wake it.
	waitOn   []string
	awaited  string             // with waitOn, the task whose review it waits for
	compared *cas.Snapshot      // the state concerns last compared to
	watch    *refstore.RefWatch // tells sleep when the state ref may have moved
	bells    *refstore.Bells    // tells sleep when a file of waitOn may have changed
	rung     []string           // the files bells watches
	// switchFiles is how many kill-switch files the loop last saw (mode).
	switchFiles int
}

// readGap is the least time between two reads of the board by the loop
// when it wakes because the board moved: a team's board moves several
// times a second, and a supervisor with nothing to do (a coder whose work
// awaits review) would otherwise read it at every move, taking processor
// time from the agents that have work.
const readGap = 100 * time.Millisecond

// work is what the agent is started for.
type work struct {
	task    *contracts.Task
	trigger *contracts.PlanningContext
}

// Run supervises until the goal is completed, the team is aborted, ctx is
// cancelled (nil error in those cases), the supervisor is replaced
// (ErrStale), or the agent crash-loops (ErrCrashLoop).
func Run(ctx context.Context, c Config) error {
	if c.Backoff <= 0 {
		c.Backoff = 2 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	s := &sup{Config: c}
	s.lane.freed = make(chan struct{}, 1)
	s.lane.read = func() (*contracts.State, error) { st, _, err := s.read(); return st, err }
	// A coder or a reviewer looks at the work in play, never into a
	// finished task: it reads those from the index. A coder looks into its
	// own tasks alone: what it claims, and what it may claim, the index
	// says. The planner reads the board whole.
	s.view.Live = c.Role != contracts.RolePlanner
	if c.Role == contracts.RoleCoder {
		s.view.Own = c.ID
	}
	s.watch = c.Repo.WatchRef(refstore.StateRef)
	defer func() { s.watch.Close() }()
	defer s.listen(nil)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go s.keepAlive(ctx, cancel)
	err := s.loop(ctx)
	s.waitMerges()
	if cause := context.Cause(ctx); errors.Is(cause, ErrStale) {
		return cause
	}
	return err
}

// waiting prints a waiting message once until the situation changes.
func (s *sup) waiting(msg string) { s.waitingAs(EventWaiting, msg) }

// waitingAs is waiting with the event's kind.
func (s *sup) waitingAs(kind, msg string) {
	if msg != s.logged {
		s.eventf(kind, "", "%s", msg)
		s.logged = msg
	}
}

// do runs one call on the board, one at a time.
func (s *sup) do(call func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return call()
}

// board reads the state at the tip, syncing first in remote mode.
func (s *sup) board(ctx context.Context) (*contracts.State, refstore.Hash, error) {
	if s.Remote {
		if err := s.syncRemote(ctx); err != nil {
			s.waiting("cannot sync with the remote: " + err.Error())
		}
	}
	return s.read()
}

// read reads the state at the local tip. The supervisor keeps the board
// it read last and reads again only what each operation since changed: a
// state this repository wrote or verified (its sync verifies what it
// fetches) is valid as it is; any other is read whole and validated.
func (s *sup) read() (*contracts.State, refstore.Hash, error) {
	tip, ok, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		return nil, tip, err
	}
	if !ok {
		return nil, tip, contracts.Invalidf("no blackboard yet: run `git liza init GOAL`")
	}
	snap, err := cas.ReadSnapshot(s.Repo, tip)
	if err != nil {
		return nil, tip, err
	}
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	st, err := s.view.Read(snap, (&cas.Store{Repo: s.Repo}).KnownGood(tip))
	s.lastRead = time.Now()
	return st, tip, err
}

// mode is the effective kill-switch mode, for the loop: it records how
// many switch files it saw, and sleep wakes when that changes. Counting
// them again when sleep starts missed a file removed in between (a person
// who lifts a pause the moment the log says PAUSED).
func (s *sup) mode(st *contracts.State) (string, []contracts.Switch) {
	files := contracts.StatSwitchFiles(s.Root)
	s.switchFiles = len(files)
	return modeOf(st, files)
}

// modeOf is the effective mode of st's switches and the switch files.
func modeOf(st *contracts.State, files map[string]time.Time) (string, []contracts.Switch) {
	sw := contracts.ActiveSwitches(st.Control, files)
	return contracts.EffectiveMode(sw), sw
}

func (s *sup) poll(st *contracts.State) time.Duration {
	if s.Poll > 0 {
		return s.Poll
	}
	secs := st.Config.CoderPollInterval
	switch s.Role {
	case contracts.RoleReviewer:
		secs = st.Config.ReviewerPollInterval
	case contracts.RolePlanner:
		secs = st.Config.PlannerPollInterval
	}
	if secs <= 0 {
		secs = 30
	}
	return time.Duration(secs) * time.Second
}

func (s *sup) loop(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return nil
		}
		s.waitOn = nil // next sets it again while the coder still waits
		st, tip, err := s.board(ctx)
		if err != nil {
			// Seed 000: when the blackboard fails validation, agents pause.
			s.switchFiles = len(contracts.StatSwitchFiles(s.Root))
			s.waiting("waiting: " + err.Error())
			s.sleep(ctx, 2*time.Second, tip)
			continue
		}
		if err := s.current(st); err != nil {
			return err
		}
		mode, sw := s.mode(st)
		switch mode {
		case contracts.ModeAborted:
			s.eventf(EventStopping, "", "ABORT (%s): stopping", switchSource(sw))
			return nil
		case contracts.ModePaused, contracts.ModeCheckpoint:
			s.waitingAs(EventPaused, fmt.Sprintf("%s (%s): waiting", mode, switchSource(sw)))
			s.sleep(ctx, s.poll(st), tip)
			continue
		}
		if s.diskHeld() {
			s.lookDisk(false)
		}
		if s.storeHeld() {
			s.lookStore(ctx)
		}
		if !s.held() {
			s.recordKept(ctx)
		}
		if st.Goal.Status == "COMPLETED" {
			s.eventf(EventStopping, "", "goal %s is completed: stopping", st.Goal.ID)
			if s.Role == contracts.RoleCoder {
				s.tidy(ctx)
			}
			return nil
		}
		if s.held() {
			s.sleep(ctx, s.holdWait(), tip)
			continue
		}
		w, acted, err := s.next(ctx, st)
		if err != nil {
			if s.holding(err) {
				continue // the next look waits for the hold to end
			}
			if serr := s.staleNow(); serr != nil {
				return serr
			}
			s.waiting(err.Error())
			s.sleep(ctx, s.poll(st), tip)
			continue
		}
		if w == nil {
			if !acted {
				s.waitingAs(EventNoWork, "waiting for work")
				s.sleep(ctx, s.poll(st), tip)
			}
			continue
		}
		s.logged = ""
		if err := s.runAgent(ctx, st, w); err != nil {
			return err
		}
	}
}

// current returns ErrStale unless st still registers this supervisor's
// generation of the agent id.
func (s *sup) current(st *contracts.State) error {
	a := st.Agents[s.ID]
	if a == nil {
		return fmt.Errorf("%w: %s is no longer registered", ErrStale, s.ID)
	}
	if a.Generation != s.Generation {
		return fmt.Errorf("%w: %s is now generation %d, this supervisor is generation %d", ErrStale, s.ID, a.Generation, s.Generation)
	}
	return nil
}

// staleNow is current on the state as it is now, after an operation was
// refused: it is the board, not the refusal's wording, that says whether a
// newer registration took the id.
func (s *sup) staleNow() error {
	st, _, err := s.read()
	if err != nil {
		return nil
	}
	return s.current(st)
}

// switchSource says where the switches that are on come from.
func switchSource(sw []contracts.Switch) string {
	var src []string
	for _, x := range sw {
		d := x.Source
		if x.By != "" {
			d += " by " + x.By
		}
		if x.Reason != "" {
			d += ": " + x.Reason
		}
		src = append(src, d)
	}
	return strings.Join(src, "; ")
}

// sleep waits up to d, waking early when the state ref moves, a
// kill-switch file appears or goes, or the merge lane is free again. It
// learns of a move of the state ref from the system's file notifications
// (refstore.RefWatch), or, where the ref cannot be watched, by looking at
// its loose file every refStep, a few system calls; either way work handed
// to this agent is taken up at once. Every checkStep it reads the ref
// wherever it is (packed, or in another ref storage) and the kill-switch
// files.
//
// A coder that waits for its review (waitOn) sleeps past d: only a move
// of the board changes what it waits for, and those wake it. With a
// remote it does not, since its poll is what fetches the remote's moves.
// A team's coders mostly wait for their reviews, and each read of the
// board at every poll took processor time from the reviewer they wait on.
func (s *sup) sleep(ctx context.Context, d time.Duration, tip refstore.Hash) {
	if s.Remote || len(s.waitOn) == 0 {
		s.listen(nil)
	} else {
		s.listen(append(slices.Clone(s.waitOn), cas.MetaFile))
	}
	files := s.switchFiles
	deadline := time.Now().Add(d)
	checked := time.Now()
	for {
		if !time.Now().Before(deadline) {
			if len(s.waitOn) == 0 || s.Remote {
				return
			}
			deadline = time.Now().Add(d)
		}
		step, moved := refStep, (<-chan struct{})(nil)
		switch {
		case s.bells.Watching():
			step, moved = checkStep, s.bells.C
		case s.watch.Watching():
			step, moved = checkStep, s.watch.C
		}
		select {
		case <-ctx.Done():
			return
		case <-s.lane.freed:
			return
		case <-moved:
		case <-time.After(min(step, time.Until(deadline))):
		}
		cur, ok := s.Repo.LooseRef(refstore.StateRef)
		if !ok || cur == tip {
			if time.Since(checked) < checkStep && time.Now().Before(deadline) {
				continue
			}
			checked = time.Now()
			s.watch.Rearm()
			if len(contracts.StatSwitchFiles(s.Root)) != files {
				return
			}
			var err error
			if cur, ok, err = s.Repo.ReadRef(refstore.StateRef); err != nil || !ok || cur == tip {
				continue
			}
		}
		switch s.concerns(tip, cur) {
		case notMine:
			tip = cur
			continue
		case others:
			s.viewMu.Lock()
			last := s.lastRead
			s.viewMu.Unlock()
			pause(ctx, min(time.Until(last.Add(readGap)), time.Until(deadline)))
		}
		return
	}
}

// listen watches the bells of files (refstore.Bells), or none: a coder
// that waits for its review wakes when a writer of git-liza's rings the
// bell of its task, its agent or liza.yaml, not at every move of the
// board, which it then looks at only every checkStep. The bells of a task
// it no longer waits for are removed. While bells ring for it, it does not
// watch the state ref either: each move woke every waiting coder's watch,
// only for sleep to pass the signal over, and a team's board moves several
// times a second.
func (s *sup) listen(files []string) {
	defer s.watchRef()
	if slices.Equal(files, s.rung) && (files == nil || s.bells != nil) {
		return
	}
	s.bells.Close()
	var gone []string
	for _, f := range s.rung {
		if strings.HasPrefix(f, cas.TasksDir+"/") || strings.HasPrefix(f, cas.ArchiveDir+"/") {
			if !slices.Contains(files, f) {
				gone = append(gone, f)
			}
		}
	}
	s.Repo.RemoveBells(gone)
	s.bells, s.rung = nil, files
	if files != nil {
		s.bells = s.Repo.WatchBells(files)
	}
}

// watchRef watches the state ref unless bells ring for this supervisor; a
// new watch signals at once, since the ref may have moved unwatched.
func (s *sup) watchRef() {
	switch {
	case s.bells.Watching() && s.watch != nil:
		s.watch.Close()
		s.watch = nil
	case !s.bells.Watching() && s.watch == nil:
		s.watch = s.Repo.WatchRef(refstore.StateRef)
	}
}

// What a move of the board is to a sleeping supervisor (see concerns).
const (
	notMine = iota // nothing it waits for changed: sleep on
	mine           // its own work changed: read the board now
	others         // the board changed for all: read it, but not more often than readGap
)

// concerns says what the move of the board from tip to cur is to this
// supervisor. A reviewer, the one many coders wait on, takes up any move
// at once; a coder that waits for its review sleeps on until its task
// stops waiting (merged, rejected, taken from it: not its review taken up
// or approved), its agent or liza.yaml (switches, settings, the goal: not
// the sprint's metrics, which every merge changes) changes, and wakes at
// once for the first two. Any other sleeping coder or planner reads at
// most every readGap: a team's board moves several times a second.
func (s *sup) concerns(tip, cur refstore.Hash) int {
	if s.Role == contracts.RoleReviewer {
		return mine
	}
	if len(s.waitOn) == 0 {
		return others
	}
	// The state it compared last is, after a move that concerned it not,
	// the one it compares from next.
	a := s.compared
	if a == nil || a.Commit != tip {
		var err error
		if a, err = cas.ReadSnapshot(s.Repo, tip); err != nil {
			return others
		}
	}
	b, err := cas.ReadSnapshot(s.Repo, cur)
	if err != nil {
		return others
	}
	s.compared = b
	same := func(path string) bool {
		x, err1 := a.FileID(path)
		y, err2 := b.FileID(path)
		return err1 == nil && err2 == nil && x == y
	}
	live := cas.EntityFile(cas.TasksDir, s.awaited)
	for _, p := range s.waitOn {
		if same(p) {
			continue
		}
		if p == live { // its review taken up, its approval: it still waits
			if t, err := b.Task(s.awaited); err == nil && t != nil && s.awaits(t) {
				continue
			}
		}
		return mine
	}
	if !same(cas.MetaFile) {
		if ok, err := cas.SameButMetrics(a, b); err != nil || !ok {
			return others
		}
	}
	return notMine
}

// refStep and checkStep are how often sleep looks at the state ref's
// loose file, and at the ref wherever it is and the kill-switch files.
const (
	refStep   = 10 * time.Millisecond
	checkStep = 200 * time.Millisecond
)

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
