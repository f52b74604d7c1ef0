package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/transcript"
	"github.com/liza-dev/git-liza/worktree"
)

// IdleLimit is how many sessions in a row may end on the same task without
// moving it (exit 0 with the task still held, or stopped at the timebox)
// before the supervisor gives the task up: a coder's is blocked for the
// planner, a reviewer's review released.
const IdleLimit = 3

// UnfinishedLimit is how many sessions in a row may end on the same task
// without finishing it (no submit, block or handoff) when some of them
// committed: commits are progress, but a task that never comes to a
// submit goes to the planner too.
const UnfinishedLimit = 3 * IdleLimit

// session is one run of the agent CLI.
type session struct {
	log     string // the file that holds its output (NAME.jsonl)
	started time.Time
	// branchAt is where a coder's task branch was when the session
	// started: a session that moved it made progress, whatever else it
	// did not finish.
	branchAt refstore.Hash
	exit     int // -1 when it did not exit by itself
	stopped  string
	// format is how its output is read (transcript.Format*); tw keeps it
	// in the log, parsed.
	format string
	tw     *transcript.Writer
	// out keeps the last lines of its plain output: all of it for format
	// text, else its stderr (quoted when the stream has nothing to quote).
	out *tailWriter
	// outcome and detail are what the task history records of its end,
	// for the log's End record.
	outcome, detail string
	// failure is the environment failure its stream shows, if any
	// (transcript.Classify), set once it has ended.
	failure *transcript.Failure
	// stall tells a session that only retries a failure of its
	// environment, while it runs (codex waiting for the network).
	stall *transcript.Stall
	// tail is what a failure quotes of it, once lastOutput has read it.
	tail     lastWords
	tailRead bool
	// model is the model its CLI was told to use, when its stream does
	// not name it (see launchModel).
	model string
}

// runAgent starts the agent for w and handles its exit.
func (s *sup) runAgent(ctx context.Context, st *contracts.State, w *work) error {
	pc := contracts.SessionContext(st, s.Role, s.ID, w.task, w.trigger)
	pc.ProjectRoot, pc.Generation = s.Root, s.Generation
	dir := s.Root
	name, email := Identity(s.Repo, s.ID)
	env := append(slices.Clone(s.Env),
		"LIZA_AGENT_ID="+s.ID, "LIZA_ROLE="+s.Role.IDPrefix(), "LIZA_PROJECT_ROOT="+s.Root,
		fmt.Sprintf("LIZA_AGENT_GENERATION=%d", s.Generation),
		"GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email,
		"GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email)
	label := "planning"
	if t := w.task; t != nil {
		label = t.ID
		wd, cleanup, err := s.workDir(ctx, t)
		if wait, ok := s.reviewSetupFailed(ctx, err); ok {
			s.waiting(wait.Error())
			return nil
		}
		if err != nil {
			if s.holding(err) {
				return nil // the loop waits for the hold to end
			}
			return s.cannotStart(ctx, err.Error())
		}
		defer cleanup()
		if s.Role == contracts.RoleCoder {
			s.clearLocks(ctx, t.ID, wd)
		}
		dir, pc.Worktree = wd, wd
		env = append(env, "LIZA_TASK="+t.ID, "LIZA_WORKTREE="+dir)
		if s.Role == contracts.RoleReviewer {
			env = append(env, "LIZA_BASE_COMMIT="+t.BaseCommit, "LIZA_REVIEW_COMMIT="+t.ReviewCommit)
		}
	} else {
		env = append(env, "LIZA_TRIGGER="+w.trigger.Trigger)
	}
	bw, ok, err := s.budgetGate(ctx, st, w)
	if !ok {
		return err
	}
	s.runs++
	sname := s.sessionName(label)
	sd := s.sessionDirs(dir)
	sd.MCP = s.mcpServer(sd, sname)
	pc.Tools = sd.MCP != nil
	prompt, err := contracts.BuildPrompt(pc)
	if err != nil {
		return err
	}
	file, err := s.savePrompt(sname, prompt)
	if err != nil {
		return s.unlessDiskFull(err)
	}
	env = append(env, "LIZA_PROMPT_FILE="+file)
	if sd.MCP != nil {
		// The server acts as this session's agent: its identity is
		// written into the CLI's configuration of it.
		sd.MCP.Env = identityEnv(env)
		sd.MCP.Forward = forwardNames(refstore.AgentEnv(env, s.Role == contracts.RoleCoder))
	}
	argv, extra, err := s.Launch.Argv(sd, prompt)
	if err != nil {
		return s.cannotStart(ctx, err.Error())
	}
	env = append(env, extra...)
	if stubs := s.stubs(); len(stubs) > 0 {
		if err := worktree.Exclude(s.Repo, stubs...); err != nil {
			s.eventf(EventError, taskOf(w), "keep the sandbox's stub files out of git status: %v", err)
		}
		defer removeStubs(dir, s.Launch.Preset.Stubs)
	}
	ses := &session{exit: -1, out: &tailWriter{}, format: s.Launch.Format()}
	ses.model = launchModel(ses.format, argv, env)
	logFile, err := s.openLog(sname)
	if err != nil {
		return s.unlessDiskFull(err)
	}
	defer logFile.Close()
	ses.log = logFile.Name()
	ses.tw = s.transcript(logFile, ses, w, dir, label, file)
	defer func() { ses.tw.End(ses.end()) }()
	bw.attach(ses.tw)
	cmd := exec.Command(argv[0], argv[1:]...)
	// What another agent may have planted in the repository's config, and
	// replace refs, do not reach this agent's git (refstore/contain.go).
	cmd.Dir, cmd.Env = dir, refstore.AgentEnv(env, s.Role == contracts.RoleCoder)
	cmd.Stdout, cmd.Stderr = ses.tw.Stdout(), io.MultiWriter(ses.tw.Stderr(), ses.out)
	if ses.format == transcript.FormatText {
		// A command's plain output is read in the order it was printed:
		// one pipe for both streams (exec shares it when the writers are
		// the same), every line an `out` record. Two pipes would let a
		// crash's last lines come out of order.
		both := io.MultiWriter(ses.tw.Stdout(), ses.out)
		cmd.Stdout, cmd.Stderr = both, both
	}
	ownGroup(cmd)
	cmd.WaitDelay = outputGrace
	ses.branchAt = s.taskBranch(w)
	ses.started = time.Now()
	timebox, grace := st.Config.Timebox(s.Role), st.Config.TimeboxGraceAfter()
	s.sessionStarted(label, ses.log)
	if err := s.startSession(cmd); err != nil {
		s.record(ctx, w, ses, ops.SessionNoStart, err.Error())
		return s.cannotStart(ctx, fmt.Sprintf("cannot start %s: %v", argv[0], err))
	}
	s.startFails = nil
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		// The session is over when its agent exits: a process it left
		// behind holding its output (a server started with &, a daemon
		// that left the group) neither holds the supervisor (WaitDelay)
		// nor outlives the session in its group.
		signalGroup(cmd, sigKill)
		s.endSession(cmd)
		if errors.Is(err, exec.ErrWaitDelay) {
			err = nil
		}
		done <- err
	}()
	// In remote mode the board moves on other clones: fetch it while the
	// session runs, as the loop does between sessions, so that watchRun
	// sees an abort or a pause --stop-sessions set elsewhere.
	stopSync := s.syncDuring(ctx, s.poll(st))
	ses.stopped = s.watchRun(ctx, cmd, done, timebox, grace, ses.stall, bw)
	stopSync()
	exitErr := <-done
	took := time.Since(ses.started).Round(10 * time.Millisecond)
	// Whether it failed for its environment rather than its task; package
	// transcript tells, the supervisor's handling of it is elsewhere.
	ses.failure = transcript.Classify(ses.format, ses.tw.Steps(), exitStatus(exitErr))
	if strings.HasPrefix(ses.stopped, stalledStop) {
		s.eventf(EventSessionEnded, taskOf(w), "%s: stopped: %s (after %s)", label, ses.stopped, took)
		ses.failure = ses.stall.Check(time.Now())
		return s.envFailed(ctx, w, ses)
	}
	if ses.stopped != "" {
		s.eventf(EventSessionEnded, taskOf(w), "%s: stopped: %s (after %s)", label, ses.stopped, took)
		if ses.stopped == replaced {
			return fmt.Errorf("%w: %s has a newer registration", ErrStale, s.ID)
		}
		if bw != nil && bw.over != nil {
			s.record(context.WithoutCancel(ctx), w, ses, ops.SessionStopped, ses.stopped)
			return s.overBudget(ctx, w, ses, *bw.over)
		}
		if strings.HasPrefix(ses.stopped, timeboxStop) {
			s.record(ctx, w, ses, ops.SessionTimebox, ses.stopped)
			return s.idle(ctx, w, ses, ses.stopped)
		}
		s.record(context.WithoutCancel(ctx), w, ses, ops.SessionStopped, ses.stopped)
		return nil
	}
	status := exitStatus(exitErr)
	ses.exit = status
	if ses.failure != nil {
		return s.envFailed(ctx, w, ses)
	}
	switch status {
	case ExitRestart:
		s.eventf(EventSessionEnded, taskOf(w), "%s: exited 42 after %s: restarting at once", label, took)
		s.record(ctx, w, ses, ops.SessionRestart, "exited 42: graceful abort, restarting at once")
		return nil
	case ExitDone:
		s.eventf(EventSessionEnded, taskOf(w), "%s: exited 0 after %s", label, took)
		if w.trigger != nil {
			s.record(ctx, w, ses, ops.SessionDone, "")
			s.seen = w.trigger.Fingerprint()
			s.crashes = nil
			s.notesDone(ctx, w.trigger)
			return nil
		}
		s.crashes = nil
		if cur := s.stillHeld(ctx, w.task); cur != nil {
			why := fmt.Sprintf("exited 0 but %s is still %s and held: no submit, block or handoff", w.task.ID, cur.Status)
			if during := s.failedOnHold(ctx, ses.started); during != "" {
				s.notCounted(ctx, w, ses, label, "exited 0 without moving "+w.task.ID, during, "an idle session", ops.SessionIdle, why)
				return nil
			}
			if s.recordUnlessHeld(ctx, w, ses, label, "exited 0 without moving "+w.task.ID, "an idle session", ops.SessionIdle, why) {
				return nil
			}
			return s.idle(ctx, w, ses, why)
		}
		s.record(ctx, w, ses, ops.SessionDone, "")
		s.forgetIdle(w.task.ID)
		return nil
	}
	c := crashOf(status, took)
	if during := s.failedOnHold(ctx, ses.started); during != "" {
		s.notCounted(ctx, w, ses, label, fmt.Sprintf("exited %d after %s", status, took), during, "a crash", ops.SessionCrash, c.String())
		return nil
	}
	if s.recordUnlessHeld(ctx, w, ses, label, fmt.Sprintf("exited %d after %s", status, took), "a crash", ops.SessionCrash, c.String()) {
		return nil
	}
	return s.crashed(ctx, w, c, ses.lastOutput())
}

// crashLines is how many of its last lines a crash's anomaly and blocked
// reason quote from the agent's output.
const crashLines = 8

// record writes the end of a session into its task's history, with the
// session's log file and, for a failure, the last words of its output
// (lastOutput).
// A planner's session has no task: its log is named in the supervisor's
// output only.
func (s *sup) record(ctx context.Context, w *work, ses *session, outcome, detail string) {
	if outcome != ops.SessionDone && outcome != ops.SessionRestart {
		detail = withOutput(detail, ses.lastOutput())
	}
	ses.outcome, ses.detail = outcome, detail
	usage := s.sessionUsage(ses)
	if w.task == nil {
		// A planner's session is recorded only for what it spent, on the
		// agent's entry: it counts toward the goal.
		if usage != nil {
			r := ops.SessionRequest{Outcome: outcome, Exit: ses.exit, Usage: usage}
			if err := s.do(func() error { _, err := s.Board.SessionEnded(ctx, r); return err }); err != nil && !s.kept(err, r) {
				s.eventf(EventError, "", "record the session's usage: %v", err)
			}
		}
		return
	}
	r := ops.SessionRequest{Task: w.task.ID, Outcome: outcome, Exit: ses.exit,
		Seconds: int(time.Since(ses.started).Seconds()), Log: s.relPath(ses.log), Detail: detail, Usage: usage}
	if err := s.do(func() error { _, err := s.Board.SessionEnded(ctx, r); return err }); err != nil && !s.kept(err, r) {
		s.eventf(EventError, w.task.ID, "record the session on %s: %v", w.task.ID, err)
	}
}

// Identity is the git identity an agent commits with: liza.agentName and
// liza.agentEmail from git config, in which {id} stands for the agent id,
// else the agent id and ID@liza.invalid. It needs no identity configured on
// the machine, and the code history says which agent wrote what.
func Identity(repo *refstore.Repo, id string) (name, email string) {
	name, email = "{id}", "{id}@liza.invalid"
	if repo != nil {
		if v, ok := repo.Config("liza.agentName"); ok && strings.TrimSpace(v) != "" {
			name = v
		}
		if v, ok := repo.Config("liza.agentEmail"); ok && strings.TrimSpace(v) != "" {
			email = v
		}
	}
	return strings.ReplaceAll(name, "{id}", id), strings.ReplaceAll(email, "{id}", id)
}

// workDir is where the agent for t runs, and what to do once it is done. A
// coder works in its task's worktree, which must be on this machine. A
// reviewer reads the commit under review in a checkout of its own
// (ops.ReviewCheckout), removed afterwards.
func (s *sup) workDir(ctx context.Context, t *contracts.Task) (string, func(), error) {
	if s.Role != contracts.RoleReviewer {
		dir := s.worktreePath(t)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", nil, fmt.Errorf("the worktree of %s is not on this machine (%s)", t.ID, dir)
		}
		return dir, func() {}, nil
	}
	var dir string
	if err := s.do(func() (err error) { dir, err = s.Board.ReviewCheckout(ctx, s.ID, t.ID); return }); err != nil {
		return "", nil, err
	}
	return dir, func() {
		if err := worktree.RemoveDetached(context.WithoutCancel(ctx), s.Repo, dir); err != nil {
			s.eventf(EventError, t.ID, "remove the review checkout %s: %v", dir, err)
		}
	}, nil
}

// notesDone marks the human notes that woke the planner processed, once
// it has exited 0, so that no restarted supervisor wakes it for them again.
func (s *sup) notesDone(ctx context.Context, p *contracts.PlanningContext) {
	var ns []int
	for _, it := range p.Items {
		if v, ok := strings.CutPrefix(it, "note:"); ok {
			if n, err := strconv.Atoi(v); err == nil {
				ns = append(ns, n)
			}
		}
	}
	if len(ns) == 0 {
		return
	}
	if err := s.do(func() error { _, err := s.Board.NotesDone(ctx, ops.NotesDoneRequest{Notes: ns}); return err }); err != nil {
		s.eventf(EventError, "", "mark %s processed: %v", ops.NoteList(ns), err)
	}
}

// stillHeld returns the task as it is now if the agent left it where it
// found it: a coder's task still CLAIMED, a reviewer's still under its
// review; else nil.
func (s *sup) stillHeld(ctx context.Context, t *contracts.Task) *contracts.Task {
	st, _, err := s.board(ctx)
	if err != nil {
		return nil
	}
	if cur := st.Task(t.ID); cur != nil && s.holds(cur) {
		return cur
	}
	return nil
}

// replaced is why an agent was stopped when its supervisor was replaced;
// timeboxStop starts the reason of one stopped at its timebox;
// stalledStop of one stopped because it only retried a failure of its
// environment (transcript.Stall).
const (
	replaced    = "this supervisor was replaced by a newer registration"
	timeboxStop = "timebox"
	stalledStop = "environment"
)

// watchRun waits for the agent, stopping its process group on ABORT, when
// ctx is cancelled, or at the end of its timebox or of a budget (bw, see
// budget.go): then it is asked to stop
// (SIGINT) and made to after grace (SIGTERM, then SIGKILL). It returns why
// it stopped the agent, or "".
func (s *sup) watchRun(ctx context.Context, cmd *exec.Cmd, done chan error, timebox, grace time.Duration, stall *transcript.Stall, bw *budgetWatch) string {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var expired <-chan time.Time
	if timebox > 0 {
		t := time.NewTimer(timebox)
		defer t.Stop()
		expired = t.C
	}
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
		case <-expired:
			s.interrupt(cmd, done, grace, EventTimebox, fmt.Sprintf("the session reached its timebox of %s", timebox))
			return fmt.Sprintf("%s of %s reached", timeboxStop, timebox)
		case <-tick.C:
		case <-bw.spent():
		}
		if f := stall.Check(time.Now()); f != nil {
			s.eventf(EventSessionEnded, "", "the agent CLI has only retried a failure of its environment for %s (%s): stopping the session", s.stallAfter(), f.Message)
			kill(cmd, done)
			return fmt.Sprintf("%s: %s", stalledStop, f.Message)
		}
		if why := s.stopOverBudget(bw, cmd, done, grace); why != "" {
			return why
		}
		aborted := false
		if _, ok := contracts.StatSwitchFiles(s.Root)[".liza/ABORT"]; ok {
			aborted = true
		} else if cur, ok, err := s.Repo.ReadRef(refstore.StateRef); err == nil && ok && cur != tip {
			tip = cur
			if st, _, err := s.read(); err == nil {
				bw.seen(st)
				if why := s.stopOverBudget(bw, cmd, done, grace); why != "" {
					return why
				}
				aborted = st.Control != nil && st.Control.Mode == contracts.ModeAborted
				if why := s.stopSessions(ctx, st, cmd, done, grace); why != "" {
					return why
				}
				if s.current(st) != nil {
					kill(cmd, done)
					return replaced
				}
			}
		}
		if aborted {
			kill(cmd, done)
			return "ABORT"
		}
	}
}

// interrupt stops the agent the way its timebox does, saying why (an
// event of kind): it is asked to stop (SIGINT), and made to after grace
// (kill).
func (s *sup) interrupt(cmd *exec.Cmd, done chan error, grace time.Duration, kind, why string) {
	s.eventf(kind, "", "%s: asking the agent to stop (SIGINT)", why)
	signalGroup(cmd, sigInt)
	select {
	case err := <-done:
		done <- err
	case <-time.After(grace):
		s.eventf(kind, "", "the agent is still running %s after SIGINT: SIGTERM", grace)
		kill(cmd, done)
	}
}

// outputGrace is how long a session's output is read after its agent
// exited, for what a process it left behind still holds open.
const outputGrace = 2 * time.Second

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

// savePrompt writes the prompt where the agent (and a person) can read it
// again, outside the working tree; name is its sessionName.
func (s *sup) savePrompt(name, prompt string) (string, error) {
	dir := filepath.Join(s.PromptDir, s.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".md")
	return path, os.WriteFile(path, []byte(prompt), 0o644)
}

// openLog creates the file that keeps a session's output, a session log
// of package transcript; name is its sessionName.
func (s *sup) openLog(name string) (*os.File, error) {
	s.pruneLogs()
	dir := filepath.Join(s.sessionLogDir(), s.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, name+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// sessionName names a session's prompt and log files: when it started, its
// number in this supervisor's life, and what it was for.
func (s *sup) sessionName(label string) string {
	return fmt.Sprintf("%s-%03d-%s", s.Now().UTC().Format("20060102T150405"), s.runs, label)
}

// relPath shows a path under the project root relative to it.
func (s *sup) relPath(p string) string {
	if rel, err := filepath.Rel(s.Root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
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

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// tailWriter keeps the end of what is written to it.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

const tailKeep = 16 << 10

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailKeep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailKeep:]...)
	}
	return len(p), nil
}

// lastLines returns the last n non-empty lines written, each cut to 200
// bytes.
func (t *tailWriter) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(string(t.buf), "\n") {
		if l = strings.TrimRight(l, "\r \t"); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
