package cas

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

func readCommit(t *testing.T, s *Store, id refstore.Hash) *refstore.Commit {
	t.Helper()
	c, err := s.Repo.ReadCommit(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantTrailers(t *testing.T, msg string, want map[string]string) {
	t.Helper()
	got := Trailers(msg)
	if len(got) != len(want) {
		t.Errorf("trailers %v, want %v\n%s", got, want, msg)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("trailer %s = %q, want %q\n%s", k, got[k], v, msg)
		}
	}
}

func TestInitCreatesStateRef(t *testing.T) {
	s := newStore(t)
	op := initOp()
	op.Request = "init-1"
	res := mustUpdate(t, s, op)
	if res.Attempts != 1 || res.Replayed || string(res.Value) != `{"goal":"goal-1"}` {
		t.Errorf("result %+v, value %s", res, res.Value)
	}
	if got := tip(t, s); got != res.Commit {
		t.Fatalf("%s at %s, result says %s", refstore.StateRef, got, res.Commit)
	}
	c := readCommit(t, s, res.Commit)
	if len(c.Parents) != 0 {
		t.Errorf("the first state commit has parents %v", c.Parents)
	}
	if !strings.HasPrefix(c.Message, "init: build it\n\n") {
		t.Errorf("message %q", c.Message)
	}
	wantTrailers(t, c.Message, map[string]string{"Liza-Op": "init", "Liza-Agent": "human", "Liza-Request": "init-1"})
	// The human operator's commits carry Store.Author, at the store's clock.
	if c.Author.Name != "Ada Operator" || c.Author.Email != "ada@example.com" || !c.Author.When.Equal(now) {
		t.Errorf("author %+v", c.Author)
	}
	// git reads the same trailers.
	dir := s.Repo.Dir()
	if got := git(t, dir, "log", "-1", "--format=%(trailers:key=Liza-Op,valueonly)|%(trailers:key=Liza-Agent,valueonly)", refstore.StateRef); got != "init\n|human" {
		t.Errorf("git sees trailers %q", got)
	}
	files := lsTree(t, s, c.Tree)
	if len(files) != 4 || files[0] != inflightFile || files[1] != LayoutFile || files[2] != MetaFile || files[3] != locate2(requestPath("init-1")) {
		t.Errorf("tree %q", files)
	}
	if got := git(t, dir, "rev-list", "--count", refstore.StateRef); got != "1" {
		t.Errorf("%s commits on the state ref", got)
	}
	// Init on an existing state is refused by the op and moves nothing.
	_, err := s.Update(context.Background(), initOp())
	wantCode(t, err, contracts.CodeInvalid)
	if tip(t, s) != res.Commit {
		t.Error("a refused init moved the ref")
	}
}

func TestUpdateWithoutStateRefused(t *testing.T) {
	s := newStore(t)
	called := false
	op := putTasks(task("task-1"))
	inner := op.Apply
	op.Apply = func(tx *Tx) (any, error) { called = true; return inner(tx) }
	_, err := s.Update(context.Background(), op)
	wantCode(t, err, contracts.CodeInvalid)
	if called {
		t.Error("Apply ran with no state")
	}
	if !tip(t, s).IsZero() {
		t.Error("the state ref was created")
	}
}

func TestAgentCommit(t *testing.T) {
	s := initStore(t)
	prev := tip(t, s)
	op := putTasks(task("task-1"))
	op.Request = "add-task-1"
	res := mustUpdate(t, s, op)
	c := readCommit(t, s, res.Commit)
	if len(c.Parents) != 1 || c.Parents[0] != prev {
		t.Fatalf("parents %v, want the previous tip %s", c.Parents, prev)
	}
	if c.Author.Name != "planner-1" || c.Author.Email != "planner-1@liza.invalid" || !c.Author.When.Equal(now) {
		t.Errorf("author %+v", c.Author)
	}
	if !strings.HasPrefix(c.Message, "add task-1\n\n") {
		t.Errorf("message %q", c.Message)
	}
	wantTrailers(t, c.Message, map[string]string{
		"Liza-Op": "add", "Liza-Agent": "planner-1", "Liza-Task": "task-1", "Liza-Request": "add-task-1",
	})
	if got := git(t, s.Repo.Dir(), "log", "-1", "--format=%an <%ae>|%(trailers:key=Liza-Task,valueonly)", refstore.StateRef); got != "planner-1 <planner-1@liza.invalid>|task-1" {
		t.Errorf("git log says %q", got)
	}
	if ok, _ := s.Repo.FileAt(res.Commit, locate2("tasks/task-1.yaml")); !ok {
		t.Error("tasks/task-1.yaml missing")
	}
	// The next commit builds on this one.
	res2 := mustUpdate(t, s, putTasks(task("task-2", "task-1")))
	if c := readCommit(t, s, res2.Commit); len(c.Parents) != 1 || c.Parents[0] != res.Commit {
		t.Errorf("parents %v, want %s", c.Parents, res.Commit)
	}
}

func TestFallbackAuthor(t *testing.T) {
	s := newStore(t)
	s.Author = refstore.Signature{}
	res := mustUpdate(t, s, initOp())
	c := readCommit(t, s, res.Commit)
	if c.Author.Name != "git-liza" || c.Author.Email != "git-liza@liza.invalid" || !c.Author.When.Equal(now) {
		t.Errorf("author %+v", c.Author)
	}
	// Without a subject, the op name is the subject.
	res = mustUpdate(t, s, Op{Name: contracts.OpNote, Apply: func(tx *Tx) (any, error) {
		_, err := tx.Append(ListHumanNotes, &contracts.HumanNote{Timestamp: tx.NowString(), Message: "hi"})
		return nil, err
	}})
	c = readCommit(t, s, res.Commit)
	if !strings.HasPrefix(c.Message, "note\n\n") {
		t.Errorf("message %q", c.Message)
	}
	wantTrailers(t, c.Message, map[string]string{"Liza-Op": "note", "Liza-Agent": "human"})
}

func TestNoChangeMakesNoCommit(t *testing.T) {
	s := initStore(t)
	before := tip(t, s)
	res := mustUpdate(t, s, Op{Name: contracts.OpEdit, Apply: func(tx *Tx) (any, error) {
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		return m.Goal.ID, nil
	}})
	if res.Commit != before || tip(t, s) != before || string(res.Value) != `"goal-1"` {
		t.Fatalf("result %+v (value %s); tip %s, was %s", res, res.Value, tip(t, s), before)
	}
	// Writing back what is there already makes no commit either.
	res = mustUpdate(t, s, Op{Name: contracts.OpEdit, Apply: func(tx *Tx) (any, error) {
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		tx.PutMeta(m)
		return nil, nil
	}})
	if res.Commit != before || tip(t, s) != before {
		t.Fatalf("an unchanged rewrite moved the ref")
	}
}

// TestBellsOfAMove: a move rings the bells of the files it changed, and
// not liza.yaml's when only the sprint's metrics changed in it (every
// merge recomputes them; coders waiting for their reviews woke at each).
func TestBellsOfAMove(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
		for _, id := range []string{"task-1", "task-2"} {
			tx.PutTask(task(id))
			if err := tx.Plan(id); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}})
	files := []string{MetaFile, EntityFile(TasksDir, "task-1"), EntityFile(TasksDir, "task-2")}
	bells := s.Repo.WatchBells(files)
	defer bells.Close()
	long := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	rung := func() []string {
		t.Helper()
		var out []string
		for _, f := range files {
			bell := filepath.Join(s.Repo.CommonDir, "liza", "bells", url.PathEscape(f))
			fi, err := os.Stat(bell)
			if err != nil {
				t.Fatal(err)
			}
			if fi.ModTime().After(long) {
				out = append(out, f)
			}
			if err := os.Chtimes(bell, long, long); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	rung()
	edit := func(change func(m *Meta), task string) {
		t.Helper()
		mustUpdate(t, s, Op{Name: contracts.OpEdit, Apply: func(tx *Tx) (any, error) {
			m, err := tx.Meta()
			if err != nil {
				return nil, err
			}
			change(m)
			tx.PutMeta(m)
			if task != "" {
				x, err := tx.MustTask(task)
				if err != nil {
					return nil, err
				}
				x.Description += " again"
				tx.PutTask(x)
			}
			return nil, nil
		}})
	}
	n := 0
	metrics := func(m *Meta) { n++; m.Sprint.Metrics = contracts.Extra{"tasks_done": n} }
	edit(metrics, "task-1")
	if got := rung(); !slices.Equal(got, files[1:2]) {
		t.Fatalf("metrics and task-1 changed: rang %v, want %v", got, files[1:2])
	}
	edit(metrics, "")
	if got := rung(); len(got) != 0 {
		t.Fatalf("metrics changed: rang %v, want none", got)
	}
	edit(func(m *Meta) { metrics(m); m.Config.MaxInFlight = 7 }, "task-2")
	if got := rung(); !slices.Equal(got, []string{MetaFile, files[2]}) {
		t.Fatalf("metrics, a setting and task-2 changed: rang %v, want %v", got, []string{MetaFile, files[2]})
	}
}

func TestApplyErrorWritesNothing(t *testing.T) {
	s := initStore(t)
	before := tip(t, s)
	boom := errors.New("boom")
	_, err := s.Update(context.Background(), Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
		tx.PutTask(task("task-1"))
		return nil, boom
	}})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want Apply's", err)
	}
	if tip(t, s) != before {
		t.Fatal("a failed Apply moved the ref")
	}
}

// bump moves the state ref with git alone, to a new commit of the same
// tree, as a concurrent writer would.
func bump(t *testing.T, s *Store, msg string) refstore.Hash {
	t.Helper()
	dir := s.Repo.Dir()
	old := tip(t, s)
	c := git(t, dir, "commit-tree", old.String()+"^{tree}", "-p", old.String(), "-m", msg)
	git(t, dir, "update-ref", refstore.StateRef, c, old.String())
	return hashOf(c)
}

// Another writer of git-liza's that starts while an update is being
// built waits for the update's turn: the update does not lose the race
// and build again; the other lands after it, on it.
func TestAnotherStoreWaitsForTurn(t *testing.T) {
	s := initStore(t)
	other := openStore(t, s.Repo.Dir())
	var theirs chan *Result
	res := mustUpdate(t, s, Op{Name: contracts.OpAdd, Agent: "planner-1", Apply: func(tx *Tx) (any, error) {
		if theirs == nil {
			theirs = make(chan *Result, 1)
			go func() {
				r, err := other.Update(context.Background(), putTasks(task("task-x")))
				if err != nil {
					t.Error(err)
				}
				theirs <- r
			}()
			time.Sleep(300 * time.Millisecond) // time enough to overtake, were it not waiting
		}
		tx.PutTask(task("task-y"))
		return nil, nil
	}})
	if res.Attempts != 1 {
		t.Fatalf("attempts %d, want 1: the other writer overtook the update", res.Attempts)
	}
	r := <-theirs
	if r == nil {
		t.FailNow()
	}
	if c := readCommit(t, s, r.Commit); len(c.Parents) != 1 || c.Parents[0] != res.Commit {
		t.Fatalf("the other's parents %v, want the update's commit %s", c.Parents, res.Commit)
	}
	for _, p := range []string{"tasks/task-x.yaml", "tasks/task-y.yaml"} {
		if ok, _ := s.Repo.FileAt(tip(t, s), locate2(p)); !ok {
			t.Errorf("%s missing: a change was lost", p)
		}
	}
}

// Where git moves the ref (core.fsync set: see refstore.DirectRefs), the
// writers of git-liza take no turns, and one that loses the race to
// another builds again on its commit.
func TestRetryAfterLostRaceToAnotherStore(t *testing.T) {
	s, other := racingStores(t)
	var theirs refstore.Hash
	calls := 0
	res := mustUpdate(t, s, Op{Name: contracts.OpAdd, Agent: "planner-1", Apply: func(tx *Tx) (any, error) {
		calls++
		if calls == 1 {
			theirs = mustUpdate(t, other, putTasks(task("task-x"))).Commit
		}
		tx.PutTask(task("task-y"))
		return calls, nil
	}})
	if res.Attempts != 2 || calls != 2 || string(res.Value) != "2" {
		t.Fatalf("attempts %d, calls %d, value %s; want 2, 2, 2", res.Attempts, calls, res.Value)
	}
	if c := readCommit(t, s, res.Commit); len(c.Parents) != 1 || c.Parents[0] != theirs {
		t.Fatalf("parents %v, want the concurrent commit %s", c.Parents, theirs)
	}
	for _, p := range []string{"tasks/task-x.yaml", "tasks/task-y.yaml"} {
		if ok, _ := s.Repo.FileAt(tip(t, s), locate2(p)); !ok {
			t.Errorf("%s missing: the retry lost a change", p)
		}
	}
}

func TestRetryAfterLostRaceToGit(t *testing.T) {
	s := initStore(t)
	var theirs refstore.Hash
	calls := 0
	res := mustUpdate(t, s, Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
		calls++
		if calls == 1 {
			theirs = bump(t, s, "moved by hand")
		}
		tx.PutTask(task("task-1"))
		return nil, nil
	}})
	if res.Attempts != 2 {
		t.Fatalf("attempts %d, want 2", res.Attempts)
	}
	if c := readCommit(t, s, res.Commit); len(c.Parents) != 1 || c.Parents[0] != theirs {
		t.Fatalf("parents %v, want %s", c.Parents, theirs)
	}
}

func TestBudgetSpent(t *testing.T) {
	s := initStore(t)
	s.Budget = 50 * time.Millisecond
	calls := 0
	_, err := s.Update(context.Background(), Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
		calls++
		bump(t, s, "concurrent writer")
		tx.PutTask(task("task-1"))
		return nil, nil
	}})
	e := wantCode(t, err, contracts.CodeContention)
	if !strings.Contains(e.Msg, refstore.StateRef) {
		t.Errorf("message %q does not name the ref", e.Msg)
	}
	if calls < 2 {
		t.Errorf("Apply ran %d times; the loop did not retry", calls)
	}
	if ok, _ := s.Repo.FileAt(tip(t, s), locate2("tasks/task-1.yaml")); ok {
		t.Error("the operation landed although it reported contention")
	}
	if got := git(t, s.Repo.Dir(), "log", "--format=%s", refstore.StateRef); strings.Contains(got, "add") {
		t.Errorf("history has the op's commit:\n%s", got)
	}
}

func TestContextCancelStopsRetry(t *testing.T) {
	s := initStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := s.Update(ctx, Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
		bump(t, s, "concurrent writer")
		cancel()
		tx.PutTask(task("task-1"))
		return nil, nil
	}})
	if err == nil {
		t.Fatal("Update succeeded after its context was cancelled")
	}
}

func TestMoveRefMovesTogether(t *testing.T) {
	s := initStore(t)
	dir := s.Repo.Dir()
	head := hashOf(git(t, dir, "rev-parse", "HEAD"))

	res := mustUpdate(t, s, Op{Name: contracts.OpInit, Apply: func(tx *Tx) (any, error) {
		tx.PutTask(task("task-1"))
		tx.MoveRef(refstore.RefUpdate{Name: "refs/heads/integration", Old: refstore.ZeroID, New: head})
		return nil, nil
	}})
	if tip(t, s) != res.Commit || git(t, dir, "rev-parse", "refs/heads/integration") != head.String() {
		t.Fatal("the state ref and the branch did not both move")
	}

	// A stale extra ref makes the whole operation lose: neither moves.
	s.Budget = 50 * time.Millisecond
	before := tip(t, s)
	_, err := s.Update(context.Background(), Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
		tx.PutTask(task("task-2"))
		tx.MoveRef(refstore.RefUpdate{Name: "refs/heads/integration", Old: refstore.ZeroID, New: head})
		return nil, nil
	}})
	wantCode(t, err, contracts.CodeContention)
	if tip(t, s) != before || git(t, dir, "rev-parse", "refs/heads/integration") != head.String() {
		t.Fatal("a lost transaction moved a ref")
	}
}

func TestRequestReplay(t *testing.T) {
	s := initStore(t)
	calls := 0
	op := Op{Name: contracts.OpAdd, Agent: "planner-1", Request: "req-42", Apply: func(tx *Tx) (any, error) {
		calls++
		tx.PutTask(task("task-1"))
		return map[string]int{"n": calls}, nil
	}}
	first := mustUpdate(t, s, op)
	if first.Replayed || string(first.Value) != `{"n":1}` {
		t.Fatalf("first %+v, value %s", first, first.Value)
	}
	second := mustUpdate(t, s, op)
	if !second.Replayed || second.Commit != first.Commit || string(second.Value) != `{"n":1}` {
		t.Fatalf("second %+v, value %s; want a replay of %s", second, second.Value, first.Commit)
	}
	if calls != 1 {
		t.Errorf("Apply ran %d times", calls)
	}
	if tip(t, s) != first.Commit {
		t.Fatal("a replay moved the ref")
	}

	// The record survives later operations.
	mustUpdate(t, s, putTasks(task("task-2")))
	moved := tip(t, s)
	if r := mustUpdate(t, s, op); !r.Replayed || tip(t, s) != moved {
		t.Fatalf("replay after another op: %+v", r)
	}

	// The same id for another operation or another agent is refused.
	for _, o := range []Op{
		{Name: contracts.OpEdit, Agent: "planner-1", Request: "req-42", Apply: op.Apply},
		{Name: contracts.OpAdd, Agent: "planner-2", Request: "req-42", Apply: op.Apply},
		{Name: contracts.OpAdd, Request: "req-42", Apply: op.Apply},
	} {
		_, err := s.Update(context.Background(), o)
		wantCode(t, err, contracts.CodeInvalid)
	}
	if calls != 1 || tip(t, s) != moved {
		t.Fatalf("a refused request ran (calls %d) or moved the ref", calls)
	}
}

// racingStores are two stores of one repository whose writers can lose
// races to each other: git moves the ref (core.fsync set, see
// refstore.DirectRefs), so they take no turns.
func racingStores(t *testing.T) (*Store, *Store) {
	s := initStore(t)
	git(t, s.Repo.Dir(), "config", "core.fsync", "reference")
	return openStore(t, s.Repo.Dir()), openStore(t, s.Repo.Dir())
}

func TestRequestReplayAfterLostRace(t *testing.T) {
	// The first attempt loses; a concurrent process applies the same
	// request meanwhile. The retry must replay, not apply twice.
	s, other := racingStores(t)
	calls := 0
	apply := func(tx *Tx) (any, error) {
		calls++
		tx.PutTask(task("task-1"))
		return calls, nil
	}
	res := mustUpdate(t, s, Op{Name: contracts.OpAdd, Request: "once", Apply: func(tx *Tx) (any, error) {
		if calls == 0 {
			mustUpdate(t, other, Op{Name: contracts.OpAdd, Request: "once", Apply: apply})
		}
		return apply(tx)
	}})
	if !res.Replayed || res.Attempts != 2 || string(res.Value) != "1" {
		t.Fatalf("result %+v, value %s; want a replay on the second attempt", res, res.Value)
	}
}

func TestValidRequestID(t *testing.T) {
	for _, id := range []string{"a", "req-1", "A.b_c:d-1", strings.Repeat("x", 128)} {
		if err := ValidRequestID(id); err != nil {
			t.Errorf("ValidRequestID(%q): %v", id, err)
		}
	}
	s := initStore(t)
	before := tip(t, s)
	for _, id := range []string{"has space", strings.Repeat("x", 129), "a/b", "../x", "é", "a\nb", "semi;colon"} {
		wantCode(t, ValidRequestID(id), contracts.CodeInvalid)
		called := false
		_, err := s.Update(context.Background(), Op{Name: contracts.OpAdd, Request: id, Apply: func(tx *Tx) (any, error) {
			called = true
			return nil, nil
		}})
		wantCode(t, err, contracts.CodeInvalid)
		if called {
			t.Errorf("Apply ran for request id %q", id)
		}
	}
	if tip(t, s) != before {
		t.Fatal("an invalid request id moved the ref")
	}
}

func TestRequestPathIsSpread(t *testing.T) {
	p := requestPath("req-1")
	parts := strings.Split(p, "/")
	if len(parts) != 3 || parts[0] != RequestDir || len(parts[1]) != 2 || len(parts[2]) != 38 {
		t.Fatalf("requestPath = %q", p)
	}
	if requestPath("req-2") == p {
		t.Fatal("two ids share a path")
	}
}

func TestTrailers(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want map[string]string
	}{
		{"claim task-3 (coder-1)\n\nLiza-Op: claim\nLiza-Agent: coder-1\nLiza-Task: task-3\n",
			map[string]string{"Liza-Op": "claim", "Liza-Agent": "coder-1", "Liza-Task": "task-3"}},
		{"subject only\n", map[string]string{}},
		{"subject: with colon\n", map[string]string{}},
		{"s\n\nbody: not a trailer\n\nLiza-Op: add\n", map[string]string{"Liza-Op": "add"}},
		{"s\n\nLiza-Op:   spaced  \nNot A Key: x\nnocolon\n", map[string]string{"Liza-Op": "spaced"}},
		{"s\n\nKey: a: b\n", map[string]string{"Key": "a: b"}},
		{"", map[string]string{}},
	} {
		got := Trailers(c.msg)
		if len(got) != len(c.want) {
			t.Errorf("Trailers(%q) = %v, want %v", c.msg, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("Trailers(%q)[%s] = %q, want %q", c.msg, k, got[k], v)
			}
		}
	}
}

// TestChosenInput: an operation that chooses its input on the state it
// applies to records the choice (Liza-Input); a request id still names
// what was asked. A choice that changes what was asked is refused, and
// nothing moves.
func TestChosenInput(t *testing.T) {
	s := initStore(t)
	asked := `{"asked":{"task":"x"},"task":""}`
	op := Op{Name: contracts.OpAdd, Agent: "planner-1", Kind: "pick", Input: json.RawMessage(asked), Request: "req-7", Apply: func(tx *Tx) (any, error) {
		tx.Choose(json.RawMessage(`{"asked":{"task":"x"},"task":"task-1"}`))
		tx.PutTask(task("task-1"))
		return nil, nil
	}}
	res := mustUpdate(t, s, op)
	msg := git(t, s.Repo.Dir(), "log", "-1", "--format=%B", res.Commit.String())
	if !strings.Contains(msg, `Liza-Input: {"asked":{"task":"x"},"task":"task-1"}`) {
		t.Fatalf("the commit records %q, not the choice", msg)
	}
	if again := mustUpdate(t, s, op); !again.Replayed || again.Commit != res.Commit {
		t.Fatalf("the same request again: %+v, want a replay of %s", again, res.Commit)
	}

	before := tip(t, s)
	_, err := s.Update(context.Background(), Op{Name: contracts.OpAdd, Agent: "planner-1", Kind: "pick", Input: json.RawMessage(asked), Apply: func(tx *Tx) (any, error) {
		tx.Choose(json.RawMessage(`{"asked":{"task":"y"},"task":"task-2"}`))
		tx.PutTask(task("task-2"))
		return nil, nil
	}})
	wantCode(t, err, contracts.CodeInvalid)
	if tip(t, s) != before {
		t.Fatal("a choice that changed what was asked moved the ref")
	}
}
