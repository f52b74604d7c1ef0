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
// the supervisor.
const (
	CrashLimit  = 3
	CrashWindow = 5 * time.Minute
)

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

// sup is a running supervisor.
type sup struct {
	Config
	mu       sync.Mutex // serialises Liza calls
	logged   string     // the last waiting message, printed once
	crashes  []time.Time
	seen     string // fingerprint of the planning context last handed to the planner
	runs     int
	lastTask string
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
	s := &sup{Config: c}
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
		if a := st.Agents[s.ID]; a == nil || a.Generation != s.Generation {
			gen := 0
			if a != nil {
				gen = a.Generation
			}
			return fmt.Errorf("%w: %s is now generation %d, this supervisor is generation %d", ErrStale, s.ID, gen, s.Generation)
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
			var ce *contracts.Error
			if errors.As(err, &ce) && strings.HasPrefix(ce.Msg, "stale supervisor") {
				return fmt.Errorf("%w: %s", ErrStale, ce.Msg)
			}
			s.logf("%v", err)
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
			return &work{task: t}, false, nil
		}
	}
	statusOf := func(id string) (contracts.Status, bool) {
		for _, t := range st.Tasks {
			if t.ID == id {
				return t.Status, true
			}
		}
		for _, t := range st.Archive {
			if t.ID == id {
				return t.Status, true
			}
		}
		return "", false
	}
	any := false
	for _, t := range st.Tasks {
		if contracts.Claimable(t, statusOf) || t.Status == contracts.Claimed && leaseOver(t.LeaseExpires, s.Now()) {
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
	now := s.Now()
	for _, t := range st.Tasks {
		if t.Status != contracts.Approved {
			continue
		}
		// The approver merges its approval; any reviewer finishes one whose
		// approver has gone.
		if t.ApprovedBy != s.ID && live(st.Agents[t.ApprovedBy], now) {
			continue
		}
		out, err := s.liza(ctx, "--json", "merge", t.ID)
		if err != nil {
			s.logf("merge %s failed: %v", t.ID, err)
			return nil, true, nil
		}
		s.logf("merged %s into %s at %s", t.ID, jsonField(out, "integration_branch"), shortSHA(jsonField(out, "merge_commit")))
		return nil, true, nil
	}
	for _, t := range st.Tasks {
		if t.Status == contracts.ReadyForReview && t.ReviewingBy == s.ID {
			return &work{task: t}, false, nil
		}
	}
	any := false
	for _, t := range st.Tasks {
		if t.Status == contracts.ReadyForReview && t.AssignedTo != s.ID &&
			(t.ReviewingBy == "" || leaseOver(t.ReviewLeaseExpires, now)) {
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
	for _, t := range st.Tasks {
		if t.ID == id {
			return &work{task: t}, false, nil
		}
	}
	return nil, false, fmt.Errorf("task %s is not on the board after its claim", id)
}

// runAgent starts the agent for w and handles its exit.
func (s *sup) runAgent(ctx context.Context, st *contracts.State, w *work) error {
	pc := contracts.PromptContext{AgentID: s.ID, Role: s.Role, ProjectRoot: s.Root, Generation: s.Generation, Planning: w.trigger}
	dir := s.Root
	env := append(slices.Clone(s.Env),
		"LIZA_AGENT_ID="+s.ID, "LIZA_ROLE="+string(s.Role), "LIZA_PROJECT_ROOT="+s.Root,
		fmt.Sprintf("LIZA_AGENT_GENERATION=%d", s.Generation))
	label := "planning"
	if t := w.task; t != nil {
		label = t.ID
		pc.Task = t
		dir = s.worktreePath(t)
		pc.Worktree = dir
		env = append(env, "LIZA_TASK="+t.ID, "LIZA_WORKTREE="+dir)
		if s.Role == contracts.RoleReviewer {
			pc.Author, pc.BaseCommit, pc.ReviewCommit = t.AssignedTo, t.BaseCommit, t.ReviewCommit
			env = append(env, "LIZA_BASE_COMMIT="+t.BaseCommit, "LIZA_REVIEW_COMMIT="+t.ReviewCommit)
		}
		pc.Handoff = st.Handoff[t.ID]
	} else {
		env = append(env, "LIZA_TRIGGER="+w.trigger.Trigger)
	}
	for _, n := range st.HumanNotes {
		if n.For == "" || w.task != nil && n.For == w.task.ID || n.For == s.ID || n.For == string(s.Role) {
			pc.HumanNotes = append(pc.HumanNotes, n)
		}
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
		return s.crashed(ctx, w, fmt.Sprintf("cannot start %s: %v", argv[0], err))
	}
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

// stillHeld reports whether the agent left its task where it found it:
// a coder's task still CLAIMED, a reviewer's still under its review.
func (s *sup) stillHeld(ctx context.Context, t *contracts.Task) bool {
	st, _, err := s.board(ctx)
	if err != nil {
		return false
	}
	for _, cur := range st.Tasks {
		if cur.ID != t.ID {
			continue
		}
		switch s.Role {
		case contracts.RoleCoder:
			return cur.Status == contracts.Claimed && cur.AssignedTo == s.ID
		case contracts.RoleReviewer:
			return cur.Status == contracts.ReadyForReview && cur.ReviewingBy == s.ID
		}
	}
	return false
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
					if a := st.Agents[s.ID]; a == nil || a.Generation != s.Generation {
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
	now := time.Now()
	s.crashes = append(s.crashes, now)
	recent := s.crashes[:0]
	for _, t := range s.crashes {
		if now.Sub(t) <= CrashWindow {
			recent = append(recent, t)
		}
	}
	s.crashes = recent
	n := len(s.crashes)
	if n >= CrashLimit {
		s.logf("agent crashed %d times in %s (%s): stopping", n, CrashWindow, why)
		s.crashLoop(ctx, w, why, n)
		return fmt.Errorf("%w: %d crashes in %s, last: %s", ErrCrashLoop, n, CrashWindow, why)
	}
	delay := s.Backoff << (n - 1)
	s.logf("agent crashed (%s); retrying in %s", why, delay)
	select {
	case <-ctx.Done():
	case <-time.After(delay):
	}
	return nil
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
	args := []string{"anomaly", "retry_loop", "--detail", fmt.Sprintf("count=%d", n), "--detail", "error_pattern=" + pattern}
	if s.Role == contracts.RolePlanner {
		args = []string{"anomaly", "system_ambiguity", "--detail", "protocol_section=supervisor", "--detail", "question=" + pattern}
	}
	if task != "" {
		args = append(args, "--task", task)
	}
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
			var ce *contracts.Error
			if errors.As(err, &ce) && strings.HasPrefix(ce.Msg, "stale supervisor") {
				s.logf("%s", ce.Msg)
				stop(fmt.Errorf("%w: %s", ErrStale, ce.Msg))
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
	return a != nil && !leaseOver(a.LeaseExpires, now)
}

func leaseOver(expires string, now time.Time) bool {
	at, err := contracts.ParseTime(expires)
	return err != nil || !at.After(now)
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
