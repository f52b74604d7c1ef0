package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// fakeBoard records the operations a supervisor runs, each as the verb a
// person would type ("task block", "merge a"), and answers them with
// reply (nil: success with empty results).
type fakeBoard struct {
	mu        sync.Mutex // the merge lane calls beside the loop
	calls     []string
	checks    []string          // tasks whose merges were checked (CheckMerges)
	conflicts map[string]string // by task: the conflict CheckMerges finds
	anomalies []ops.AnomalyRequest
	reply     func(verb string) error
	// queue, when set, answers a run of the merge queue.
	queue func(r ops.MergeQueueRequest) *ops.MergeQueueResult
}

func (f *fakeBoard) do(verb string) error {
	f.mu.Lock()
	f.calls = append(f.calls, verb)
	f.mu.Unlock()
	if f.reply == nil {
		return nil
	}
	return f.reply(verb)
}

func (f *fakeBoard) Sync(context.Context, string) (*ops.SyncReport, error) {
	return &ops.SyncReport{}, f.do("sync")
}
func (f *fakeBoard) ProbeStore(context.Context) error { return f.do("probe") }
func (f *fakeBoard) Claim(_ context.Context, r ops.ClaimRequest) (*ops.ClaimResult, error) {
	return &ops.ClaimResult{ID: r.Task}, f.do(strings.TrimSpace("claim " + r.Task))
}
func (f *fakeBoard) Review(_ context.Context, r ops.ReviewRequest) (*ops.ReviewResult, error) {
	return &ops.ReviewResult{ID: r.Task}, f.do(strings.TrimSpace("review " + r.Task))
}

// CheckMerges finds the conflicts of f.conflicts, and is kept apart from
// calls: those are the ones that spend or change something.
func (f *fakeBoard) CheckMerges(_ context.Context, r ops.CheckMergesRequest) (*ops.CheckMergesResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks = append(f.checks, r.Task)
	return &ops.CheckMergesResult{ID: r.Task, Conflict: f.conflicts[r.Task]}, nil
}
func (f *fakeBoard) Merge(_ context.Context, r ops.MergeRequest) (*ops.MergeResult, error) {
	return &ops.MergeResult{ID: r.Task}, f.do("merge " + r.Task)
}
func (f *fakeBoard) MergeQueue(_ context.Context, r ops.MergeQueueRequest) (*ops.MergeQueueResult, error) {
	if f.queue != nil {
		return f.queue(r), f.do("merge --queue")
	}
	return &ops.MergeQueueResult{}, f.do("merge --queue")
}
func (f *fakeBoard) Heartbeat(context.Context, ops.Call) (*ops.HeartbeatResult, error) {
	return &ops.HeartbeatResult{}, f.do("heartbeat")
}
func (f *fakeBoard) Complete(context.Context, ops.Call) (ops.Written, error) {
	return ops.Written{}, f.do("supervise complete")
}
func (f *fakeBoard) NotesDone(context.Context, ops.NotesDoneRequest) (*ops.NotesDoneResult, error) {
	return &ops.NotesDoneResult{}, f.do("note --done")
}
func (f *fakeBoard) Block(_ context.Context, r ops.BlockRequest) (*ops.TaskResult, error) {
	return &ops.TaskResult{ID: r.Task}, f.do("task block")
}
func (f *fakeBoard) Release(_ context.Context, r ops.ReleaseRequest) (*ops.TaskResult, error) {
	return &ops.TaskResult{ID: r.Task}, f.do("task release")
}
func (f *fakeBoard) Anomaly(_ context.Context, r ops.AnomalyRequest) (*ops.EntryResult, error) {
	f.mu.Lock()
	f.anomalies = append(f.anomalies, r)
	f.mu.Unlock()
	return &ops.EntryResult{}, f.do("anomaly " + r.Type)
}

func (f *fakeBoard) SessionEnded(_ context.Context, r ops.SessionRequest) (ops.Written, error) {
	return ops.Written{}, f.do("session " + r.Task + " " + r.Outcome)
}
func (f *fakeBoard) Handoff(_ context.Context, r ops.HandoffRequest) (*ops.TaskResult, error) {
	return &ops.TaskResult{ID: r.Task}, f.do("handoff " + r.Task)
}
func (f *fakeBoard) ReviewCheckout(_ context.Context, agent, task string) (string, error) {
	return "", f.do("review checkout " + task)
}

// TidyMerged changes no board: it is not among the calls.
func (f *fakeBoard) TidyMerged(context.Context) ([]ops.PruneItem, error) { return nil, nil }

// verbs lists the calls.
func (f *fakeBoard) verbs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// reset forgets the calls.
func (f *fakeBoard) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

func newSup(role contracts.Role, id string, f *fakeBoard) (*sup, *bytes.Buffer) {
	var log bytes.Buffer
	return &sup{
		Config: Config{ID: id, Role: role, Generation: 1, Board: f, Log: &log, Backoff: time.Millisecond,
			Poll: time.Second, Now: func() time.Time { return time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC) }},
	}, &log
}

func TestExitStatus(t *testing.T) {
	run := func(args ...string) error { return exec.Command(args[0], args[1:]...).Run() }
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, ExitDone},
		{"exit 42", run("sh", "-c", "exit 42"), ExitRestart},
		{"exit 3", run("sh", "-c", "exit 3"), 3},
		{"killed", run("sh", "-c", "kill -9 $$"), 137},
		{"not started", errors.New("exec: no such file"), 1},
	} {
		if got := exitStatus(tc.err); got != tc.want {
			t.Errorf("%s: exitStatus = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCrashLoop: crashes back off, doubling; the CrashLimit-th within
// CrashWindow stops the supervisor with the coder's task blocked and a
// retry_loop anomaly logged.
func TestCrashLoop(t *testing.T) {
	f := &fakeBoard{}
	s, log := newSup(contracts.RoleCoder, "coder-1", f)
	w := &work{task: &contracts.Task{ID: "a", Status: contracts.Claimed}}
	ctx := context.Background()
	for i := 0; i < CrashLimit-1; i++ {
		if err := s.crashed(ctx, w, crashOf(1, 0), lastWords{}); err != nil {
			t.Fatalf("crash %d: %v", i+1, err)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("a crash below the limit wrote to the blackboard: %q", f.calls)
	}
	for _, want := range []string{"retrying in 1ms", "retrying in 2ms"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if err := s.crashed(ctx, w, crashOf(1, 0), lastWords{}); !errors.Is(err, ErrCrashLoop) {
		t.Fatalf("third crash: %v, want ErrCrashLoop", err)
	}
	if got, want := f.verbs(), []string{"task block", "anomaly retry_loop"}; !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
}

// TestCrashLoopPattern: the error_pattern of a crash loop's anomaly is the
// exit status alone, so that loops that crash alike group in the circuit
// breaker's retry_cluster whatever time each run took; the time of the
// last run is a detail of its own.
func TestCrashLoopPattern(t *testing.T) {
	var patterns []string
	for _, took := range [][]time.Duration{{0, 2 * time.Second, 0}, {time.Minute, 0, 5 * time.Second}} {
		f := &fakeBoard{}
		s, _ := newSup(contracts.RoleCoder, "coder-1", f)
		w := &work{task: &contracts.Task{ID: "a", Status: contracts.Claimed}}
		var err error
		for _, d := range took {
			err = s.crashed(context.Background(), w, crashOf(7, d), lastWords{})
		}
		if !errors.Is(err, ErrCrashLoop) || len(f.anomalies) != 1 {
			t.Fatalf("after %d crashes: %v, anomalies %+v", len(took), err, f.anomalies)
		}
		d := f.anomalies[0].Details
		patterns = append(patterns, fmt.Sprint(d["error_pattern"]))
		if got, want := fmt.Sprint(d["last_run"]), took[len(took)-1].String(); got != want {
			t.Errorf("last_run = %q, want %q", got, want)
		}
	}
	if patterns[0] != "crash loop: exit status 7" || patterns[1] != patterns[0] {
		t.Errorf("error patterns %q, want both \"crash loop: exit status 7\"", patterns)
	}
}

// TestCrashWindow: crashes older than CrashWindow do not count.
func TestCrashWindow(t *testing.T) {
	f := &fakeBoard{}
	s, log := newSup(contracts.RoleCoder, "coder-1", f)
	old := time.Now().Add(-CrashWindow - time.Minute)
	s.crashes = []time.Time{old, old, old}
	if err := s.crashed(context.Background(), &work{task: &contracts.Task{ID: "a"}}, crashOf(1, 0), lastWords{}); err != nil {
		t.Fatalf("a first crash in the window: %v", err)
	}
	if len(s.crashes) != 1 || !strings.Contains(log.String(), "retrying in 1ms") {
		t.Errorf("crashes = %d, log:\n%s", len(s.crashes), log)
	}
}

// TestCannotStart: failures to start the agent back off and stop the
// supervisor at the limit, but block nothing and log no anomaly.
func TestCannotStart(t *testing.T) {
	f := &fakeBoard{}
	s, _ := newSup(contracts.RoleCoder, "coder-1", f)
	var err error
	for i := 0; i < CrashLimit && err == nil; i++ {
		err = s.cannotStart(context.Background(), "cannot start gemini: not found")
	}
	if !errors.Is(err, ErrCannotStart) {
		t.Fatalf("after %d failures: %v, want ErrCannotStart", CrashLimit, err)
	}
	if len(f.calls) != 0 || len(s.crashes) != 0 {
		t.Errorf("a start failure counted as a crash: calls %q, crashes %d", f.calls, len(s.crashes))
	}
}

func TestRetryDelay(t *testing.T) {
	poll := 10 * time.Second
	d, seq := time.Duration(0), []time.Duration{}
	for range 7 {
		d = retryDelay(d, poll)
		seq = append(seq, d)
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, MaxRetryDelay, MaxRetryDelay}
	if !slices.Equal(seq, want) {
		t.Errorf("delays = %v, want %v", seq, want)
	}
	if got := retryDelay(time.Second, 10*time.Minute); got != 10*time.Minute {
		t.Errorf("retryDelay never goes below the poll interval: got %v", got)
	}
}

// TestFailedMergeDoesNotSpin: a merge refused without any change to the
// board is not tried again before its delay, is logged once, and does not
// keep the reviewer from its other work.
func TestFailedMergeDoesNotSpin(t *testing.T) {
	f := &fakeBoard{reply: func(verb string) error {
		switch {
		case strings.HasPrefix(verb, "merge"):
			return contracts.Invalidf("integration is checked out in /p: switch that checkout to another branch")
		case strings.HasPrefix(verb, "review"):
			return contracts.Invalidf("no task awaits review")
		}
		return nil
	}}
	s, log := newSup(contracts.RoleReviewer, "code-reviewer-1", f)
	st := &contracts.State{Tasks: []*contracts.Task{
		{ID: "a", Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c1"},
		{ID: "b", Status: contracts.ReadyForReview, AssignedTo: "coder-2"},
	}}
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		w, acted, err := s.nextReviewer(ctx, st)
		if w != nil || acted || err != nil {
			t.Fatalf("round %d: work %v, acted %v, err %v; want to wait", i+1, w, acted, err)
		}
		s.waitMerges()
	}
	got := f.verbs()
	slices.Sort(got)
	if want := []string{"merge a", "review", "review", "review"}; !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q: one merge, then the reviewer's other work", got, want)
	}
	if n := strings.Count(log.String(), "merge a failed"); n != 1 {
		t.Errorf("the failure was logged %d times:\n%s", n, log)
	}

	// Once the delay has passed it is tried again, and waits twice as long
	// after a second failure; the same error is not logged again.
	s.lane.failures["a"].retryAt = time.Now().Add(-time.Millisecond)
	f.reset()
	s.nextReviewer(ctx, st)
	s.waitMerges()
	if got := f.verbs(); !slices.Contains(got, "merge a") {
		t.Errorf("calls = %q after the delay: the merge was not tried again", got)
	}
	if d := s.lane.failures["a"].delay; d != 2*time.Second {
		t.Errorf("delay after a second failure = %v, want 2s", d)
	}
	if n := strings.Count(log.String(), "merge a failed"); n != 1 {
		t.Errorf("the same failure was logged %d times", n)
	}

	// A new commit to merge, or a task no longer approved, starts afresh.
	st.Tasks[0].ReviewCommit = "c2"
	f.reset()
	s.nextReviewer(ctx, st)
	s.waitMerges()
	if got := f.verbs(); !slices.Contains(got, "merge a") {
		t.Errorf("calls = %q: a resubmitted task's merge waited for the old one's delay", got)
	}
}

// TestMergeBesideReview: while a merge runs, the reviewer takes its next
// review; the two approved tasks go to the lane as one batch, and nothing
// more starts beside it.
func TestMergeBesideReview(t *testing.T) {
	release := make(chan struct{})
	f := &fakeBoard{}
	f.reply = func(verb string) error {
		switch {
		case strings.HasPrefix(verb, "merge"):
			<-release
		case verb == "review":
			return contracts.Invalidf("task c is taken")
		}
		return nil
	}
	s, _ := newSup(contracts.RoleReviewer, "code-reviewer-1", f)
	st := &contracts.State{Tasks: []*contracts.Task{
		{ID: "a", Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c1"},
		{ID: "b", Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c2"},
		{ID: "c", Status: contracts.ReadyForReview, AssignedTo: "coder-2"},
	}}
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, _, err := s.nextReviewer(ctx, st)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the review waited for the merge")
	}
	if got := f.verbs(); !slices.Contains(got, "review") {
		t.Fatalf("calls = %q: no review beside the merge", got)
	}
	if s.startMerge(ctx, st) {
		t.Fatal("a second merge started beside the first")
	}
	close(release)
	s.waitMerges()
	// The review and the merge run side by side: either may be called
	// first.
	got := f.verbs()
	slices.Sort(got)
	if !slices.Equal(got, []string{"merge --queue", "review"}) {
		t.Fatalf("calls = %q: want the review and a and b in one run of the merge queue", got)
	}
}

// approved is a board whose tasks ids are APPROVED by code-reviewer-1,
// each at the commit c-ID.
func approved(ids ...string) *contracts.State {
	st := &contracts.State{}
	for _, id := range ids {
		st.Tasks = append(st.Tasks, &contracts.Task{ID: id, Status: contracts.Approved, ApprovedBy: "code-reviewer-1", ReviewCommit: "c-" + id})
	}
	return st
}

// TestLaneGoesOn: after a merge that landed, the lane reads the board and
// merges the next approved task itself, while the loop is busy elsewhere;
// it stops when none is left, when a merge fails, and when the team is
// paused.
func TestLaneGoesOn(t *testing.T) {
	f := &fakeBoard{reply: func(verb string) error {
		if verb == "merge c" {
			return contracts.Invalidf("integration is checked out in /p")
		}
		return nil
	}}
	s, _ := newSup(contracts.RoleReviewer, "code-reviewer-1", f)
	// The board after each merge: b, then c (whose merge fails), then d.
	boards := []*contracts.State{approved("b"), approved("c"), approved("d")}
	s.lane.freed = make(chan struct{}, 1)
	s.lane.read = func() (*contracts.State, error) {
		st := boards[0]
		boards = boards[1:]
		return st, nil
	}
	if !s.startMerge(context.Background(), approved("a")) {
		t.Fatal("no merge started")
	}
	s.waitMerges()
	if got, want := f.verbs(), []string{"merge a", "merge b", "merge c"}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q: the lane goes on until a merge fails", got, want)
	}
	select {
	case <-s.lane.freed:
	default:
		t.Fatal("the lane stopped without telling the loop")
	}

	// Paused, the lane merges what it started and stops.
	f.reset()
	pause := approved("e")
	pause.Control = &contracts.Control{Mode: contracts.ModePaused}
	boards = []*contracts.State{pause}
	s.startMerge(context.Background(), approved("d"))
	s.waitMerges()
	if got, want := f.verbs(), []string{"merge d"}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q: a paused team merges nothing more", got, want)
	}
}

// TestLaneMergesOnce: the loop starts the lane with the board it read at
// the top of its turn, which may predate the lane's last merges (it read
// while the lane went on by itself). A task the lane merged is not merged
// again from such a board: before, the second merge failed ("t is MERGED,
// not APPROVED") and was said as a failure.
func TestLaneMergesOnce(t *testing.T) {
	f := &fakeBoard{}
	s, log := newSup(contracts.RoleReviewer, "code-reviewer-1", f)
	// The loop read a and b approved; the lane merges a, reads b, merges
	// it, then reads a board where both are MERGED.
	done := approved("a", "b")
	for _, t := range done.Tasks {
		t.Status = contracts.Merged
	}
	mid := approved("a", "b")
	mid.Tasks[0].Status = contracts.Merged
	boards := []*contracts.State{mid, done}
	s.lane.read = func() (*contracts.State, error) {
		if len(boards) == 0 {
			return done, nil
		}
		st := boards[0]
		boards = boards[1:]
		return st, nil
	}
	stale := approved("a", "b")
	s.startMerge(context.Background(), approved("a"))
	s.waitMerges()
	if s.startMerge(context.Background(), stale) {
		s.waitMerges()
	}
	if got, want := f.verbs(), []string{"merge a", "merge b"}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q: a task the lane merged was merged again from an older board", got, want)
	}
	// Approved again at another commit (sent back, reviewed again), it
	// is merged again.
	again := approved("a")
	again.Tasks[0].ReviewCommit = "c-a2"
	s.startMerge(context.Background(), again)
	s.waitMerges()
	if got := f.verbs(); len(got) != 3 || got[2] != "merge a" {
		t.Fatalf("calls = %q: a task approved again was not merged", got)
	}
	_ = log
}
