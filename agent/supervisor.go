// Package agent is the supervisor that runs one agent CLI for one Liza
// role: it waits for work, claims it before the agent starts, builds the
// role's prompt, runs the agent in its own process group, keeps its leases
// alive, and handles its exit, the kill switches and crash loops.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// Liza runs one git-liza command for the supervised agent (its id and
// generation already set) and returns what it printed on stdout. A failed
// command returns a *contracts.Error carrying its exit code.
type Liza func(ctx context.Context, args ...string) ([]byte, error)

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

// Config is one supervisor.
type Config struct {
	ID         string
	Role       contracts.Role
	Generation int
	Repo       *refstore.Repo
	// Root is the project root: the main worktree, where .worktrees/ and
	// the seed's .liza/ kill-switch files live.
	Root string
	// Command is the agent CLI; the prompt is appended as its last
	// argument.
	Command []string
	Liza    Liza
	// Log receives the supervisor's own lines; AgentOut the agent's
	// output.
	Log      io.Writer
	AgentOut io.Writer
	// Env is the environment agents start from.
	Env []string
	// Poll overrides the poll interval of the state's config.
	Poll time.Duration
	// Backoff is the first delay after a crash; it doubles with each
	// crash in a row (default 2s).
	Backoff time.Duration
	// Remote is set in remote mode: the supervisor syncs before it looks
	// at the board.
	Remote bool
	// PromptDir is where prompts are saved (outside the working tree).
	PromptDir string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

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

// sup is a running supervisor.
type sup struct {
	Config
	mu         sync.Mutex // serialises Liza calls
	logged     string     // the last waiting message, printed once
	crashes    []time.Time
	startFails []time.Time
	seen       string // fingerprint of the planning context last handed to the planner
	runs       int
	merges     map[string]*mergeFailure // by task id
}

// mergeFailure is a merge that failed without changing the board (its
// integration branch checked out somewhere, its task branch gone): it is
// tried again after a delay that doubles while it keeps failing.
type mergeFailure struct {
	commit  string // the reviewed commit that failed to merge
	msg     string // the last error, logged once
	delay   time.Duration
	retryAt time.Time
}

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
	s := &sup{Config: c, merges: map[string]*mergeFailure{}}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go s.keepAlive(ctx, cancel)
	err := s.loop(ctx)
	if cause := context.Cause(ctx); errors.Is(cause, ErrStale) {
		return cause
	}
	return err
}

func (s *sup) logf(format string, args ...any) {
	fmt.Fprintf(s.Log, "%s %s\n", s.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// waiting prints a waiting message once until the situation changes.
func (s *sup) waiting(msg string) {
	if msg != s.logged {
		s.logf("%s", msg)
		s.logged = msg
	}
}

func (s *sup) liza(ctx context.Context, args ...string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Liza(ctx, args...)
}

// board reads the state at the tip, syncing first in remote mode.
func (s *sup) board(ctx context.Context) (*contracts.State, refstore.Hash, error) {
	if s.Remote {
		if _, err := s.liza(ctx, "sync"); err != nil {
			s.waiting("cannot sync with the remote: " + err.Error())
		}
	}
	return s.read()
}

// read reads the state at the local tip.
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
	st, err := snap.Load()
	if err != nil {
		return nil, tip, err
	}
	if ps := contracts.Validate(st); len(ps) > 0 {
		return nil, tip, contracts.Errorf(contracts.CodeInconsistent, "the blackboard does not validate: %s", ps[0])
	}
	return st, tip, nil
}

// mode is the effective kill-switch mode.
func (s *sup) mode(st *contracts.State) (string, []contracts.Switch) {
	sw := contracts.ActiveSwitches(st.Control, contracts.StatSwitchFiles(s.Root))
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
		st, tip, err := s.board(ctx)
		if err != nil {
			// Seed 000: when the blackboard fails validation, agents pause.
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
			s.logf("ABORT (%s): stopping", switchSource(sw))
			return nil
		case contracts.ModePaused, contracts.ModeCheckpoint:
			s.waiting(fmt.Sprintf("%s (%s): waiting", mode, switchSource(sw)))
			s.sleep(ctx, s.poll(st), tip)
			continue
		}
		if st.Goal.Status == "COMPLETED" {
			s.logf("goal %s is completed: stopping", st.Goal.ID)
			return nil
		}
		w, acted, err := s.next(ctx, st)
		if err != nil {
			if serr := s.staleNow(); serr != nil {
				return serr
			}
			s.waiting(err.Error())
			s.sleep(ctx, s.poll(st), tip)
			continue
		}
		if w == nil {
			if !acted {
				s.waiting("waiting for work")
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

// staleNow is current on the state as it is now, after a command was
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

// sleep waits up to d, waking early when the state ref moves or a
// kill-switch file appears or goes.
func (s *sup) sleep(ctx context.Context, d time.Duration, tip refstore.Hash) {
	files := len(contracts.StatSwitchFiles(s.Root))
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		step := min(200*time.Millisecond, time.Until(deadline))
		select {
		case <-ctx.Done():
			return
		case <-time.After(step):
		}
		if cur, _, err := s.Repo.ReadRef(refstore.StateRef); err == nil && cur != tip {
			return
		}
		if len(contracts.StatSwitchFiles(s.Root)) != files {
			return
		}
	}
}

// next finds the role's next piece of work and claims it. acted reports
// work done without an agent (a merge, completing the goal), after which
// the loop looks at the board again at once.
func (s *sup) next(ctx context.Context, st *contracts.State) (*work, bool, error) {
	switch s.Role {
	case contracts.RoleCoder:
		return s.nextCoder(ctx, st)
	case contracts.RoleReviewer:
		return s.nextReviewer(ctx, st)
	case contracts.RolePlanner:
		return s.nextPlanner(ctx, st)
	}
	return nil, false, fmt.Errorf("no supervisor for role %s", s.Role)
}

func (s *sup) nextCoder(ctx context.Context, st *contracts.State) (*work, bool, error) {
	for _, t := range st.Tasks {
		if t.AssignedTo == s.ID && t.Status == contracts.Claimed {
			return s.resume(ctx, st, t, t.LeaseExpires)
		}
	}
	now := s.Now()
	any := false
	for _, t := range st.Tasks {
		if contracts.Claimable(t.Summary(), st.StatusOf) || t.Status == contracts.Claimed && contracts.LeaseOver(t.LeaseExpires, now) {
			any = true
			break
		}
	}
	if !any {
		return nil, false, nil
	}
	out, err := s.liza(ctx, "--json", "claim")
	if err != nil {
		if code(err) == contracts.CodeInvalid || code(err) == contracts.CodeContention {
			s.waiting("no task to claim: " + err.Error())
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("claim: %w", err)
	}
	id := jsonField(out, "id")
	s.logf("claimed %s (%s)", id, jsonField(out, "kind"))
	return s.reload(ctx, id)
}

func (s *sup) nextReviewer(ctx context.Context, st *contracts.State) (*work, bool, error) {
	if s.mergeApproved(ctx, st) {
		return nil, true, nil
	}
	for _, t := range st.Tasks {
		if t.Status == contracts.ReadyForReview && t.ReviewingBy == s.ID {
			return s.resume(ctx, st, t, t.ReviewLeaseExpires)
		}
	}
	now := s.Now()
	any := false
	for _, t := range st.Tasks {
		if t.Status == contracts.ReadyForReview && t.AssignedTo != s.ID &&
			(t.ReviewingBy == "" || contracts.LeaseOver(t.ReviewLeaseExpires, now)) {
			any = true
			break
		}
	}
	if !any {
		return nil, false, nil
	}
	out, err := s.liza(ctx, "--json", "review")
	if err != nil {
		if code(err) == contracts.CodeInvalid || code(err) == contracts.CodeContention {
			s.waiting("no review to take: " + err.Error())
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("review: %w", err)
	}
	id := jsonField(out, "id")
	s.logf("reviewing %s (author %s)", id, jsonField(out, "author"))
	return s.reload(ctx, id)
}

// mergeApproved merges an APPROVED task, as the seeds give the reviewer
// supervisor to do, and reports whether it merged one. The approver merges
// its approval; any reviewer finishes one whose approver has gone. A merge
// that fails is not tried again before its delay (see mergeFailed), so that
// a merge refused without any change to the board does not spin.
func (s *sup) mergeApproved(ctx context.Context, st *contracts.State) bool {
	now := s.Now()
	for id, f := range s.merges {
		if t := st.Task(id); t == nil || t.Status != contracts.Approved || t.ReviewCommit != f.commit {
			delete(s.merges, id)
		}
	}
	for _, t := range st.Tasks {
		if t.Status != contracts.Approved {
			continue
		}
		if t.ApprovedBy != s.ID && live(st.Agents[t.ApprovedBy], now) {
			continue
		}
		if f := s.merges[t.ID]; f != nil && time.Now().Before(f.retryAt) {
			continue
		}
		out, err := s.liza(ctx, "--json", "merge", t.ID)
		if err != nil {
			s.mergeFailed(st, t, err)
			continue
		}
		delete(s.merges, t.ID)
		s.logf("merged %s into %s at %s", t.ID, jsonField(out, "integration_branch"), shortSHA(jsonField(out, "merge_commit")))
		return true
	}
	return false
}

// mergeFailed records a failed merge of t: the first failure waits a poll
// interval before the next try, each further one twice as long as the one
// before, up to MaxRetryDelay. An error is logged once, not at every try.
func (s *sup) mergeFailed(st *contracts.State, t *contracts.Task, err error) {
	f := s.merges[t.ID]
	if f == nil {
		f = &mergeFailure{commit: t.ReviewCommit}
		s.merges[t.ID] = f
	}
	f.delay = retryDelay(f.delay, s.poll(st))
	f.retryAt = time.Now().Add(f.delay)
	if msg := err.Error(); msg != f.msg {
		f.msg = msg
		s.logf("merge %s failed: %s (trying again in %s, then less often while it fails)", t.ID, msg, f.delay)
	}
}

// retryDelay is the delay after prev: first the poll interval, then twice
// the previous one, up to MaxRetryDelay.
func retryDelay(prev, poll time.Duration) time.Duration {
	if prev <= 0 {
		return poll
	}
	return max(poll, min(2*prev, MaxRetryDelay))
}

// resume hands the agent work this supervisor already holds, after a
// restart or an agent that exited 42. A lease that is due (ended, or past
// half its term, as git liza heartbeat decides) is renewed first: a claim
// whose lease ended could be taken over by another coder while the agent
// works on it.
func (s *sup) resume(ctx context.Context, st *contracts.State, t *contracts.Task, expires string) (*work, bool, error) {
	term := time.Duration(st.Config.LeaseDuration) * time.Second
	if !cas.LeaseDue(expires, s.Now(), term) {
		return &work{task: t}, false, nil
	}
	if _, err := s.liza(ctx, "heartbeat"); err != nil {
		return nil, false, fmt.Errorf("renew the lease on %s: %w", t.ID, err)
	}
	cur, _, err := s.read()
	if err != nil {
		return nil, false, err
	}
	if t = cur.Task(t.ID); t == nil || !s.holds(t) {
		return nil, false, nil
	}
	s.logf("renewed the lease on %s before resuming it", t.ID)
	return &work{task: t}, false, nil
}

// holds reports whether this supervisor's agent holds t: a coder's task
// CLAIMED, a reviewer's under its review.
func (s *sup) holds(t *contracts.Task) bool {
	switch s.Role {
	case contracts.RoleCoder:
		return t.Status == contracts.Claimed && t.AssignedTo == s.ID
	case contracts.RoleReviewer:
		return t.Status == contracts.ReadyForReview && t.ReviewingBy == s.ID
	}
	return false
}

func (s *sup) nextPlanner(ctx context.Context, st *contracts.State) (*work, bool, error) {
	if contracts.GoalComplete(st) {
		if _, err := s.liza(ctx, "supervise", "complete"); err != nil {
			return nil, false, fmt.Errorf("complete the goal: %w", err)
		}
		s.logf("every task is terminal: goal %s and sprint %s completed", st.Goal.ID, st.Sprint.ID)
		return nil, true, nil
	}
	p := contracts.Planning(st)
	if p.Trigger == "" || p.Fingerprint() == s.seen {
		return nil, false, nil
	}
	s.logf("wake: %s (%s)", p.Trigger, strings.Join(p.Items, ", "))
	return &work{trigger: &p}, false, nil
}

// reload reads a task the supervisor just claimed.
func (s *sup) reload(ctx context.Context, id string) (*work, bool, error) {
	st, _, err := s.board(ctx)
	if err != nil {
		return nil, false, err
	}
	if t := st.Task(id); t != nil {
		return &work{task: t}, false, nil
	}
	return nil, false, fmt.Errorf("task %s is not on the board after its claim", id)
}

// runAgent starts the agent for w and handles its exit.
func (s *sup) runAgent(ctx context.Context, st *contracts.State, w *work) error {
	pc := contracts.SessionContext(st, s.Role, s.ID, w.task, w.trigger)
	pc.ProjectRoot, pc.Generation = s.Root, s.Generation
	dir := s.Root
	env := append(slices.Clone(s.Env),
		"LIZA_AGENT_ID="+s.ID, "LIZA_ROLE="+string(s.Role), "LIZA_PROJECT_ROOT="+s.Root,
		fmt.Sprintf("LIZA_AGENT_GENERATION=%d", s.Generation))
	label := "planning"
	if t := w.task; t != nil {
		label = t.ID
		wd, cleanup, err := s.workDir(ctx, t)
		if err != nil {
			return s.cannotStart(ctx, err.Error())
		}
		defer cleanup()
		dir, pc.Worktree = wd, wd
		env = append(env, "LIZA_TASK="+t.ID, "LIZA_WORKTREE="+dir)
		if s.Role == contracts.RoleReviewer {
			env = append(env, "LIZA_BASE_COMMIT="+t.BaseCommit, "LIZA_REVIEW_COMMIT="+t.ReviewCommit)
		}
	} else {
		env = append(env, "LIZA_TRIGGER="+w.trigger.Trigger)
	}
	prompt, err := contracts.BuildPrompt(pc)
	if err != nil {
		return err
	}
	s.runs++
	file, err := s.savePrompt(label, prompt)
	if err != nil {
		return err
	}
	env = append(env, "LIZA_PROMPT_FILE="+file)
	argv := append(slices.Clone(s.Command), prompt)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = s.AgentOut, s.AgentOut
	ownGroup(cmd)
	start := time.Now()
	s.logf("starting agent for %s: %s (prompt %s, %d bytes)", label, argv[0], file, len(prompt))
	if err := cmd.Start(); err != nil {
		return s.cannotStart(ctx, fmt.Sprintf("cannot start %s: %v", argv[0], err))
	}
	s.startFails = nil
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := s.watchRun(ctx, cmd, done)
	exitErr := <-done
	if stopped != "" {
		s.logf("agent for %s stopped: %s", label, stopped)
		if stopped == replaced {
			return fmt.Errorf("%w: %s has a newer registration", ErrStale, s.ID)
		}
		return nil
	}
	status := exitStatus(exitErr)
	took := time.Since(start).Round(10 * time.Millisecond)
	switch status {
	case ExitRestart:
		s.logf("agent for %s exited 42 after %s: restarting at once", label, took)
		return nil
	case ExitDone:
		s.logf("agent for %s exited 0 after %s", label, took)
		if w.trigger != nil {
			s.seen = w.trigger.Fingerprint()
			s.crashes = nil
			s.notesDone(ctx, w.trigger)
			return nil
		}
		if s.stillHeld(ctx, w.task) {
			return s.crashed(ctx, w, "exited 0 but "+w.task.ID+" is still "+string(w.task.Status)+" and held")
		}
		s.crashes = nil
		return nil
	}
	return s.crashed(ctx, w, fmt.Sprintf("exit status %d after %s", status, took))
}

// workDir is where the agent for t runs, and what to do once it is done. A
// coder works in its task's worktree, which must be on this machine. A
// reviewer reads the commit under review in a detached worktree of its own
// (worktree.ReviewPath), made now and removed afterwards: the coder's
// worktree may be on another machine, or hold later work.
func (s *sup) workDir(ctx context.Context, t *contracts.Task) (string, func(), error) {
	if s.Role != contracts.RoleReviewer {
		dir := s.worktreePath(t)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", nil, fmt.Errorf("the worktree of %s is not on this machine (%s)", t.ID, dir)
		}
		return dir, func() {}, nil
	}
	commit, ok := refstore.ParseHash(t.ReviewCommit)
	if !ok {
		return "", nil, fmt.Errorf("task %s has no commit to review", t.ID)
	}
	if !s.Repo.HasObject(commit) && s.Remote {
		if _, err := s.Repo.Fetch(ctx, s.Repo.RemoteOf(), worktree.BranchRef(t.ID)); err != nil {
			return "", nil, fmt.Errorf("fetch the commit of %s to review: %v", t.ID, err)
		}
	}
	if !s.Repo.HasObject(commit) {
		return "", nil, fmt.Errorf("the commit of %s to review, %s, is not in this repository", t.ID, shortSHA(t.ReviewCommit))
	}
	dir := worktree.ReviewPath(s.Repo, s.ID, t.ID)
	// A crashed supervisor may have left one behind.
	if err := worktree.RemoveDetached(ctx, s.Repo, dir); err != nil {
		return "", nil, fmt.Errorf("remove the old review worktree %s: %v", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", nil, err
	}
	if err := worktree.AddDetached(ctx, s.Repo, dir, commit); err != nil {
		return "", nil, fmt.Errorf("check out %s to review: %v", shortSHA(t.ReviewCommit), err)
	}
	return dir, func() {
		if err := worktree.RemoveDetached(context.WithoutCancel(ctx), s.Repo, dir); err != nil {
			s.logf("remove the review worktree %s: %v", dir, err)
		}
	}, nil
}

// notesDone marks the human notes that woke the planner processed, once
// it has exited 0, so that no restarted supervisor wakes it for them again.
func (s *sup) notesDone(ctx context.Context, p *contracts.PlanningContext) {
	var ns []string
	for _, it := range p.Items {
		if n, ok := strings.CutPrefix(it, "note:"); ok {
			ns = append(ns, n)
		}
	}
	if len(ns) == 0 {
		return
	}
	if _, err := s.liza(ctx, "note", "--done", strings.Join(ns, ",")); err != nil {
		s.logf("mark notes %s processed: %v", strings.Join(ns, ", "), err)
	}
}

// stillHeld reports whether the agent left its task where it found it:
// a coder's task still CLAIMED, a reviewer's still under its review.
func (s *sup) stillHeld(ctx context.Context, t *contracts.Task) bool {
	st, _, err := s.board(ctx)
	if err != nil {
		return false
	}
	cur := st.Task(t.ID)
	return cur != nil && s.holds(cur)
}

// replaced is why an agent was stopped when its supervisor was replaced.
const replaced = "this supervisor was replaced by a newer registration"

// watchRun waits for the agent, killing its process group on ABORT or
// when ctx is cancelled. It returns why it stopped the agent, or "".
func (s *sup) watchRun(ctx context.Context, cmd *exec.Cmd, done chan error) string {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var tip refstore.Hash
	for {
		select {
		case err := <-done:
			done <- err
			return ""
		case <-ctx.Done():
			kill(cmd, done)
			if errors.Is(context.Cause(ctx), ErrStale) {
				return replaced
			}
			return "supervisor stopping"
		case <-tick.C:
		}
		aborted := false
		if _, ok := contracts.StatSwitchFiles(s.Root)[".liza/ABORT"]; ok {
			aborted = true
		} else if cur, ok, err := s.Repo.ReadRef(refstore.StateRef); err == nil && ok && cur != tip {
			tip = cur
			if snap, err := cas.ReadSnapshot(s.Repo, cur); err == nil {
				if st, err := snap.Load(); err == nil {
					aborted = st.Control != nil && st.Control.Mode == contracts.ModeAborted
					if s.current(st) != nil {
						kill(cmd, done)
						return replaced
					}
				}
			}
		}
		if aborted {
			kill(cmd, done)
			return "ABORT"
		}
	}
}

// kill ends the agent's process group: SIGTERM, then SIGKILL after a
// grace period.
func kill(cmd *exec.Cmd, done chan error) {
	signalGroup(cmd, sigTerm)
	select {
	case err := <-done:
		done <- err
	case <-time.After(3 * time.Second):
		signalGroup(cmd, sigKill)
	}
}

// crashed records a crash: back off, or on a crash loop stop with the
// task blocked and an anomaly logged.
func (s *sup) crashed(ctx context.Context, w *work, why string) error {
	s.crashes = recent(append(s.crashes, time.Now()), time.Now())
	n := len(s.crashes)
	if n >= CrashLimit {
		s.logf("agent crashed %d times in %s (%s): stopping", n, CrashWindow, why)
		s.crashLoop(ctx, w, why, n)
		return fmt.Errorf("%w: %d crashes in %s, last: %s", ErrCrashLoop, n, CrashWindow, why)
	}
	delay := s.Backoff << (n - 1)
	s.logf("agent crashed (%s); retrying in %s", why, delay)
	pause(ctx, delay)
	return nil
}

// cannotStart records a failure to start the agent (its command or its
// directory missing): back off, and stop the supervisor after CrashLimit
// of them within CrashWindow. This is no crash of the agent: the task is
// neither blocked nor counted against, and stopping releases it.
func (s *sup) cannotStart(ctx context.Context, why string) error {
	s.startFails = recent(append(s.startFails, time.Now()), time.Now())
	n := len(s.startFails)
	if n >= CrashLimit {
		s.logf("%s (%d times in %s): stopping", why, n, CrashWindow)
		return fmt.Errorf("%w: %s", ErrCannotStart, why)
	}
	delay := s.Backoff << (n - 1)
	s.logf("%s; trying again in %s", why, delay)
	pause(ctx, delay)
	return nil
}

// recent keeps the times within CrashWindow of now.
func recent(times []time.Time, now time.Time) []time.Time {
	out := times[:0]
	for _, t := range times {
		if now.Sub(t) <= CrashWindow {
			out = append(out, t)
		}
	}
	return out
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// crashLoop records a crash loop on the blackboard: the coder's task is
// blocked for the planner, a reviewer's review released, and an anomaly
// logged.
func (s *sup) crashLoop(ctx context.Context, w *work, why string, n int) {
	pattern := "crash loop: " + why
	task := ""
	if w.task != nil {
		task = w.task.ID
	}
	switch s.Role {
	case contracts.RoleCoder:
		if task != "" {
			if _, err := s.liza(ctx, "task", "block", task, "--reason", "agent crash loop: "+why,
				"--question", "Why does the agent keep failing on this task?",
				"--question", "Should the task be rescoped or given to another coder?"); err != nil {
				s.logf("block %s: %v", task, err)
			}
		}
	case contracts.RoleReviewer:
		if task != "" {
			if _, err := s.liza(ctx, "task", "release", task, "--role", "reviewer"); err != nil {
				s.logf("release %s: %v", task, err)
			}
		}
	}
	if task == "" {
		// An anomaly is about a task; a planner's crash loop is reported by
		// the supervisor's exit alone.
		return
	}
	args := []string{"anomaly", "retry_loop", "--task", task, "--detail", fmt.Sprintf("count=%d", n), "--detail", "error_pattern=" + pattern}
	if _, err := s.liza(ctx, args...); err != nil {
		s.logf("log the crash loop: %v", err)
	}
}

// keepAlive renews the agent's leases every heartbeat interval for as
// long as the supervisor runs. A refusal because a newer supervisor took
// the id stops this one.
func (s *sup) keepAlive(ctx context.Context, stop context.CancelCauseFunc) {
	interval := time.Minute
	if tip, ok, err := s.Repo.ReadRef(refstore.StateRef); err == nil && ok {
		if snap, err := cas.ReadSnapshot(s.Repo, tip); err == nil {
			if st, err := snap.Load(); err == nil && st.Config.HeartbeatInterval > 0 {
				interval = time.Duration(st.Config.HeartbeatInterval) * time.Second
			}
		}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.liza(ctx, "heartbeat"); err != nil {
			if serr := s.staleNow(); serr != nil {
				s.logf("%v", serr)
				stop(serr)
				return
			}
			s.logf("heartbeat: %v", err)
		}
	}
}

// savePrompt writes the prompt where the agent (and a person) can read it
// again, outside the working tree.
func (s *sup) savePrompt(label, prompt string) (string, error) {
	dir := filepath.Join(s.PromptDir, s.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%03d-%s.md", s.Now().UTC().Format("20060102T150405"), s.runs, label)
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, []byte(prompt), 0o644)
}

func (s *sup) worktreePath(t *contracts.Task) string {
	if t.Worktree == "" {
		return s.Root
	}
	if filepath.IsAbs(t.Worktree) {
		return t.Worktree
	}
	return filepath.Join(s.Root, filepath.FromSlash(t.Worktree))
}

// live reports whether an agent entry holds a lease that has not ended.
func live(a *contracts.Agent, now time.Time) bool {
	return a != nil && !contracts.LeaseOver(a.LeaseExpires, now)
}

func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		return 128 + 9
	}
	return 1
}

func code(err error) contracts.Code {
	var ce *contracts.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return contracts.CodeInvalid
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// jsonField reads one string field of a command's --json output.
func jsonField(out []byte, key string) string {
	var m map[string]any
	if json.Unmarshal(out, &m) != nil {
		return ""
	}
	v, _ := m[key].(string)
	return v
}
