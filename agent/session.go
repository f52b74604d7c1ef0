package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

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
	if err := worktree.AddDetached(ctx, s.Repo, dir, commit, t.ID, s.ID); err != nil {
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
		s.logf("mark %s processed: %v", ops.NoteList(ns), err)
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
