package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/testrepo"
)

// A coder that waits for the review of its task sleeps through the moves
// of the board that leave its task, its agent and liza.yaml alone, wakes
// at once when its task or its agent changes, and when liza.yaml changes
// (a switch, a setting) wakes as every sleeper does. A reviewer, whom the
// coders wait on, wakes at once for any move.
func TestConcerns(t *testing.T) {
	svc := newBoard(t)
	repo := svc.Repo
	ctx := context.Background()
	add := func(id string) { addTask(t, svc, id) }
	add("mine")
	coder := &sup{Config: Config{ID: "coder-1", Role: contracts.RoleCoder, Repo: repo}}
	coder.waitOn = []string{cas.EntityFile(cas.TasksDir, "mine"), cas.EntityFile(cas.ArchiveDir, "mine"), cas.EntityFile(cas.AgentsDir, "coder-1")}
	coder.awaited = "mine" // a task it no longer waits for once edited: it is not assigned to it
	reviewer := &sup{Config: Config{ID: "code-reviewer-1", Role: contracts.RoleReviewer, Repo: repo}}
	idle := &sup{Config: Config{ID: "coder-2", Role: contracts.RoleCoder, Repo: repo}}
	tip := func() refstore.Hash {
		h, _, err := repo.ReadRef(refstore.StateRef)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	names := map[int]string{notMine: "sleep on", mine: "wake now", others: "wake after the gap"}
	for _, c := range []struct {
		what                  string
		move                  func()
		coder, reviewer, idle int
	}{
		{"another task added", func() { add("other") }, notMine, mine, others},
		{"the sprint's metrics recomputed, as every merge does", func() {
			if _, err := svc.SprintMetrics(ctx, ops.Call{}); err != nil {
				t.Fatal(err)
			}
		}, notMine, mine, others},
		{"its task edited", func() {
			d := "new words"
			if _, err := svc.EditTask(ctx, ops.EditTaskRequest{Task: "mine", Description: &d}); err != nil {
				t.Fatal(err)
			}
		}, mine, mine, others},
		{"its agent registered", func() {
			if _, err := svc.As("coder-1", 0).Register(ctx, ops.RegisterRequest{}); err != nil {
				t.Fatal(err)
			}
		}, mine, mine, others},
		{"another agent registered", func() {
			if _, err := svc.As("coder-3", 0).Register(ctx, ops.RegisterRequest{}); err != nil {
				t.Fatal(err)
			}
		}, notMine, mine, others},
		{"paused", func() {
			if _, err := svc.SetMode(ctx, ops.ModeRequest{Mode: contracts.ModePaused, Reason: "lunch"}); err != nil {
				t.Fatal(err)
			}
		}, others, mine, others},
	} {
		before := tip()
		c.move()
		after := tip()
		if before == after {
			t.Fatalf("%s: the board did not move", c.what)
		}
		for _, s := range []struct {
			who  *sup
			want int
		}{{coder, c.coder}, {reviewer, c.reviewer}, {idle, c.idle}} {
			if got := s.who.concerns(before, after); got != s.want {
				t.Errorf("%s: %s would %s, want %s", c.what, s.who.ID, names[got], names[s.want])
			}
		}
	}
}

// A sleeping supervisor wakes when the board moves, not at the end of
// its poll interval; one for whom the move changes nothing sleeps on. A
// reviewer also wakes when its merge lane is free.
func TestSleepWakesOnMove(t *testing.T) {
	svc := newBoard(t)
	ctx := context.Background()
	start := func(s *sup) chan struct{} {
		tip, _, err := svc.Repo.ReadRef(refstore.StateRef)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { s.sleep(ctx, time.Minute, tip); close(done) }()
		return done
	}
	reviewer := &sup{Config: Config{ID: "code-reviewer-1", Role: contracts.RoleReviewer, Repo: svc.Repo, Root: svc.Repo.MainWorkTree()}}
	coder := &sup{Config: Config{ID: "coder-1", Role: contracts.RoleCoder, Repo: svc.Repo, Root: svc.Repo.MainWorkTree()}}
	coder.waitOn = []string{cas.EntityFile(cas.TasksDir, "mine")}
	woke, slept := start(reviewer), start(coder)
	addTask(t, svc, "other")
	wakes(t, woke, "the reviewer slept on after the board moved")
	sleeps(t, slept, "a move that left the coder's task alone woke it")
	addTask(t, svc, "mine")
	wakes(t, slept, "the coder slept on after its task changed")

	// The end of a merge wakes the reviewer, to merge the next at once.
	reviewer.lane.freed = make(chan struct{}, 1)
	woke = start(reviewer)
	reviewer.lane.freed <- struct{}{}
	wakes(t, woke, "the reviewer slept on after its merge lane was freed")
}

// newBoard makes a repository with a blackboard in a temporary directory and
// returns the operations on it, for the human operator.
func newBoard(t *testing.T) *ops.Service {
	t.Helper()
	root := testrepo.New(t, nil)
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	svc, err := ops.New(repo, ops.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Init(context.Background(), ops.InitRequest{Goal: "goal"}); err != nil {
		t.Fatal(err)
	}
	return svc
}

func addTask(t *testing.T, svc *ops.Service, id string) {
	t.Helper()
	if _, err := svc.AddTask(context.Background(), ops.AddTaskRequest{Task: contracts.Task{ID: id, Description: id, SpecRef: "specs/vision.md",
		DoneWhen: "d", Scope: "s", Priority: 3, Status: contracts.Unclaimed}}); err != nil {
		t.Fatal(err)
	}
}

// A coder that waits for its review has nothing to look at when its poll
// interval ends: nothing it waits for changes unless the board moves, and
// sleep already wakes it for those moves. It sleeps past the interval;
// one with a remote, whose poll is what fetches the remote's moves, does
// not, nor does a coder that waits for nothing in particular.
func TestWaitingCoderSleepsPastPoll(t *testing.T) {
	svc := newBoard(t)
	tip, _, err := svc.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		t.Fatal(err)
	}
	coder := func(remote bool, waitOn ...string) *sup {
		s := &sup{Config: Config{ID: "coder-1", Role: contracts.RoleCoder, Repo: svc.Repo, Root: svc.Repo.MainWorkTree(), Remote: remote}}
		s.waitOn = waitOn
		return s
	}
	const poll = 20 * time.Millisecond
	sleep := func(s *sup) chan struct{} {
		done := make(chan struct{})
		go func() { s.sleep(context.Background(), poll, tip); close(done) }()
		return done
	}
	mine := cas.EntityFile(cas.TasksDir, "mine")
	waiting := sleep(coder(false, mine))
	for _, c := range []struct {
		what string
		s    *sup
	}{{"a coder with a remote", coder(true, mine)}, {"a coder that waits for nothing in particular", coder(false)}} {
		wakes(t, sleep(c.s), fmt.Sprintf("%s slept past its poll interval", c.what))
	}
	sleeps(t, waiting, "a coder waiting for its review woke at the end of its poll interval")
	addTask(t, svc, "other")
	sleeps(t, waiting, "a move that left the coder's task alone woke it")
	addTask(t, svc, "mine")
	wakes(t, waiting, "the coder slept on after its task changed")
}

// TestBellsReplaceRefWatch: while bells ring for a waiting coder, it does
// not watch the state ref (each move of the board woke its watch for
// nothing); once it waits for nothing in particular, it watches it again.
func TestBellsReplaceRefWatch(t *testing.T) {
	svc := newBoard(t)
	s := &sup{Config: Config{ID: "coder-1", Role: contracts.RoleCoder, Repo: svc.Repo, Root: svc.Repo.MainWorkTree()}}
	s.watch = svc.Repo.WatchRef(refstore.StateRef)
	defer func() { s.watch.Close() }()
	defer s.listen(nil)
	if !s.watch.Watching() {
		t.Skip("refs cannot be watched here (no file notification)")
	}
	s.listen([]string{cas.EntityFile(cas.TasksDir, "mine"), cas.MetaFile})
	if !s.bells.Watching() || s.watch.Watching() {
		t.Fatalf("waiting for its review: bells %v, ref watched %v; want bells alone", s.bells.Watching(), s.watch.Watching())
	}
	s.listen(nil)
	if s.bells.Watching() || !s.watch.Watching() {
		t.Fatalf("waiting for nothing in particular: bells %v, ref watched %v; want the ref alone", s.bells.Watching(), s.watch.Watching())
	}
}

// A kill-switch file lifted between the loop's look at the switches and
// its sleep (a person who removes .liza/PAUSE the moment the log says
// PAUSED) ends the sleep: sleep compares with what the loop saw.
func TestSleepSeesSwitchLiftedBeforeSleep(t *testing.T) {
	svc := newBoard(t)
	root := svc.Repo.MainWorkTree()
	tip, _, err := svc.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := (&sup{Config: Config{Repo: svc.Repo}}).read()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".liza"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".liza", "PAUSE"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := &sup{Config: Config{ID: "coder-1", Role: contracts.RoleCoder, Repo: svc.Repo, Root: root}}
	if mode, _ := s.mode(st); mode != contracts.ModePaused {
		t.Fatalf("mode %s with .liza/PAUSE, want PAUSED", mode)
	}
	if err := os.Remove(filepath.Join(root, ".liza", "PAUSE")); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.sleep(context.Background(), time.Hour, tip); close(done) }()
	wakes(t, done, "the sleep missed the pause lifted before it began")
}

// wakes fails the test with msg unless ch closes (a sleep ends) within 30
// seconds.
func wakes(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal(msg)
	}
}

// sleeps fails the test with msg if ch closes (a sleep ends) within three
// of sleep's checks.
func sleeps(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatal(msg)
	case <-time.After(3 * checkStep):
	}
}
