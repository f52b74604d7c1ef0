package cas

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// refused runs op, wants a code-1 error that mentions want, and checks the
// ref did not move.
func refused(t *testing.T, s *Store, op Op, want string) {
	t.Helper()
	before := tip(t, s)
	_, err := s.Update(context.Background(), op)
	e := wantCode(t, err, contracts.CodeInvalid)
	if !strings.Contains(e.Msg, want) {
		t.Errorf("error %q does not mention %q", e.Msg, want)
	}
	if tip(t, s) != before {
		t.Fatal("a refused operation moved the ref")
	}
}

func TestInvalidTaskRefused(t *testing.T) {
	s := initStore(t)
	bad := task("task-1")
	bad.Priority = 9
	refused(t, s, putTasks(bad), "priority 9")

	noSpec := task("task-1")
	noSpec.SpecRef = ""
	refused(t, s, putTasks(noSpec), "spec_ref")

	upper := task("Task-1")
	refused(t, s, putTasks(upper), "invalid task id")
}

// TestUnsafeEntityIDRefused: an id becomes a path in the state tree, so one
// that is not kebab-case must be refused before anything is written. An id
// such as "../../evil" would otherwise give trees with ".." entries, which
// git fsck (and any server with receive.fsckObjects) rejects.
func TestUnsafeEntityIDRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		apply func(tx *Tx)
	}{
		{"task ../../evil", func(tx *Tx) {
			x := task("task-1")
			x.ID = "../../evil"
			tx.PutTask(x)
		}},
		{"task a/b", func(tx *Tx) {
			x := task("task-1")
			x.ID = "tasks/b"
			tx.PutTask(x)
		}},
		{"agent ../coder-1", func(tx *Tx) {
			tx.PutAgent("../coder-1", &contracts.Agent{Role: "coder", Status: "IDLE"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := initStore(t)
			before := tip(t, s)
			_, err := s.Update(context.Background(), Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
				c.apply(tx)
				return nil, nil
			}})
			if err == nil {
				out, ferr := gitFsck(s.Repo.Dir())
				t.Errorf("committed; tree now:\n%s\ngit fsck --strict: %v\n%s",
					git(t, s.Repo.Dir(), "ls-tree", "-r", "--name-only", refstore.StateRef), ferr, out)
				return
			}
			wantCode(t, err, contracts.CodeInvalid)
			if tip(t, s) != before {
				t.Fatal("a refused operation moved the ref")
			}
		})
	}
}

func TestUnknownDependencyRefused(t *testing.T) {
	s := initStore(t)
	refused(t, s, putTasks(task("task-2", "task-1")), "unknown task task-1")
	// Added in the same operation, the dependency is known.
	mustUpdate(t, s, putTasks(task("task-2", "task-1"), task("task-1")))
}

func TestDependencyCycleRefused(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, putTasks(task("task-1"), task("task-2", "task-1"), task("task-3", "task-2")))

	// Changing an existing task's depends_on closes a cycle.
	refused(t, s, Op{Name: contracts.OpEdit, Apply: func(tx *Tx) (any, error) {
		t1, err := tx.MustTask("task-1")
		if err != nil {
			return nil, err
		}
		t1.DependsOn = contracts.StringList{"task-3"}
		tx.PutTask(t1)
		return nil, nil
	}}, "dependency cycle")

	// A two-task cycle made in one operation.
	refused(t, s, putTasks(task("task-8", "task-9"), task("task-9", "task-8")), "dependency cycle")

	// Depending on itself.
	refused(t, s, putTasks(task("task-7", "task-7")), "depends on itself")
}

func TestClaimedNeedsMergedDependencies(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, putTasks(task("task-1")))
	c := claimed("task-2", "coder-1")
	c.DependsOn = contracts.StringList{"task-1"}
	refused(t, s, putTasks(c), "CLAIMED while its dependency task-1 is UNCLAIMED")
}

func TestArchiveOnlyTerminal(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, putTasks(task("task-1")))
	refused(t, s, Op{Name: contracts.OpArchive, Apply: func(tx *Tx) (any, error) {
		t1, err := tx.MustTask("task-1")
		if err != nil {
			return nil, err
		}
		tx.ArchiveTask(t1)
		return nil, nil
	}}, "only MERGED, SUPERSEDED or ABANDONED")
}

func TestInvalidAgentAndAnomalyRefused(t *testing.T) {
	s := initStore(t)
	refused(t, s, Op{Name: contracts.OpRegister, Apply: func(tx *Tx) (any, error) {
		tx.PutAgent("coder-1", &contracts.Agent{Role: "planner", Status: "IDLE"})
		return nil, nil
	}}, "role")
	refused(t, s, Op{Name: contracts.OpAnomaly, Apply: func(tx *Tx) (any, error) {
		_, err := tx.Append(ListAnomalies, &contracts.Anomaly{
			ID: "anomaly-1", Type: "spec_ambiguity", TaskID: "task-404", LoggedBy: "coder-1", Timestamp: stamp,
		})
		return nil, err
	}}, "unknown task task-404")
	refused(t, s, Op{Name: contracts.OpDiscover, Apply: func(tx *Tx) (any, error) {
		_, err := tx.Append(ListDiscovered, &contracts.Discovery{ID: "d-1", By: "coder-1", Description: "x", Severity: "apocalyptic"})
		return nil, err
	}}, "severity")
	refused(t, s, Op{Name: contracts.OpEdit, Apply: func(tx *Tx) (any, error) {
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		m.Sprint.GoalRef = "goal-2"
		tx.PutMeta(m)
		return nil, nil
	}}, "goal_ref")
}

// TestIncrementalCheckKeepsOneClaimPerCoder: checkTx must refuse what
// contracts.Validate would refuse about the entities an operation touched.
// A coder holding two CLAIMED tasks is invalid state (validateExclusivity),
// so a commit that creates it must not be made and marked valid.
func TestIncrementalCheckKeepsOneClaimPerCoder(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, putTasks(claimed("task-1", "coder-1")))
	before := tip(t, s)
	_, err := s.Update(context.Background(), putTasks(claimed("task-2", "coder-1")))
	if err == nil {
		st, lerr := mustSnapshot(t, s).Load()
		if lerr != nil {
			t.Fatal(lerr)
		}
		// Once the commit drops out of the validated cache (a fresh
		// clone, 64 later commits), every operation is refused.
		os.Remove(s.validatedPath())
		_, uerr := s.Update(context.Background(), putTasks(task("task-3")))
		t.Fatalf("second CLAIMED task for coder-1 was committed; full validation says %v; "+
			"the next update without the cache fails with %v", contracts.Validate(st), uerr)
	}
	wantCode(t, err, contracts.CodeInvalid)
	if tip(t, s) != before {
		t.Fatal("a refused operation moved the ref")
	}
}

func mustSnapshot(t *testing.T, s *Store) *Snapshot {
	t.Helper()
	snap, err := ReadSnapshot(s.Repo, tip(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestIncrementalMatchesFullValidation: every state the loop commits passes
// contracts.Validate.
func TestIncrementalMatchesFullValidation(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, putTasks(task("task-1"), task("task-2", "task-1")))
	mustUpdate(t, s, Op{Name: contracts.OpRegister, Apply: func(tx *Tx) (any, error) {
		tx.PutAgent("coder-1", &contracts.Agent{Role: "coder", Status: "IDLE"})
		return nil, nil
	}})
	mustUpdate(t, s, Op{Name: contracts.OpAbandon, Apply: func(tx *Tx) (any, error) {
		t2, err := tx.MustTask("task-2")
		if err != nil {
			return nil, err
		}
		t2.Status = contracts.Abandoned
		tx.ArchiveTask(t2)
		return nil, nil
	}})
	st, err := mustSnapshot(t, s).Load()
	if err != nil {
		t.Fatal(err)
	}
	if ps := contracts.Validate(st); len(ps) > 0 {
		t.Fatalf("committed state is invalid: %v", ps)
	}
}

func TestInvalidTipRefused(t *testing.T) {
	s := initStore(t)
	meta := tipFile(t, s, MetaFile)
	bad, err := contracts.EncodeYAML(func() *contracts.Task { x := task("task-1"); x.Priority = 9; return x }())
	if err != nil {
		t.Fatal(err)
	}
	handMade := gitCommitState(t, s, map[string]string{MetaFile: meta, "tasks/task-1.yaml": string(bad)})
	e := updateRefusedInconsistent(t, s)
	if !strings.Contains(e.Msg, "priority 9") {
		t.Errorf("message %q does not say what is wrong", e.Msg)
	}
	if s.knownValid(handMade) {
		t.Error("an invalid tip was remembered as valid")
	}
}

// updateRefusedInconsistent runs an ordinary op and wants exit code 4 and
// no move.
func updateRefusedInconsistent(t *testing.T, s *Store) *contracts.Error {
	t.Helper()
	before := tip(t, s)
	called := false
	_, err := s.Update(context.Background(), Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
		called = true
		tx.PutTask(task("task-2"))
		return nil, nil
	}})
	e := wantCode(t, err, contracts.CodeInconsistent)
	if called {
		t.Error("Apply ran on an invalid tip")
	}
	if tip(t, s) != before {
		t.Fatal("the ref moved from an invalid tip")
	}
	return e
}

func TestTipNotYAMLRefused(t *testing.T) {
	s := initStore(t)
	meta := tipFile(t, s, MetaFile)
	gitCommitState(t, s, map[string]string{MetaFile: meta, "tasks/task-1.yaml": "id: [unclosed\n\t- nope: {\n"})
	e := updateRefusedInconsistent(t, s)
	if !strings.Contains(e.Msg, "tasks/task-1.yaml") {
		t.Errorf("message %q does not name the file", e.Msg)
	}
}

func TestTipWithoutMetaRefused(t *testing.T) {
	s := initStore(t)
	good, _ := contracts.EncodeYAML(task("task-1"))
	gitCommitState(t, s, map[string]string{"tasks/task-1.yaml": string(good)})
	e := updateRefusedInconsistent(t, s)
	if !strings.Contains(e.Msg, MetaFile) {
		t.Errorf("message %q does not name %s", e.Msg, MetaFile)
	}
}

func TestTipMetaNotYAMLRefused(t *testing.T) {
	s := initStore(t)
	gitCommitState(t, s, map[string]string{MetaFile: "version: [1\n"})
	updateRefusedInconsistent(t, s)
}

func TestHandEditedValidTipAccepted(t *testing.T) {
	s := initStore(t)
	meta := tipFile(t, s, MetaFile)
	good, _ := contracts.EncodeYAML(task("task-1"))
	handMade := gitCommitState(t, s, map[string]string{MetaFile: meta, "tasks/task-1.yaml": string(good)})
	if s.knownValid(handMade) {
		t.Fatal("a commit made by hand is known valid before any check")
	}
	res := mustUpdate(t, s, putTasks(task("task-2", "task-1")))
	if c := readCommit(t, s, res.Commit); c.Parents[0] != handMade {
		t.Fatalf("parent %s, want %s", c.Parents[0], handMade)
	}
	if !s.knownValid(res.Commit) {
		t.Error("the new commit is not known valid")
	}
	// The hand edit was in layout 1, without an index: the operation
	// wrote it anew in layout 2, with every live task in the index.
	snap := mustSnapshot(t, s)
	sums, err := snap.Summaries(TasksDir)
	if idx := asMap(sums); err != nil || snap.Layout() != 2 || len(idx) != 2 || idx["task-1"] == nil || idx["task-2"] == nil {
		t.Errorf("after a hand edit: layout %d, index %v, %v", snap.Layout(), idx, err)
	}
}

func TestReplaceRepairsInvalidTip(t *testing.T) {
	s := initStore(t)
	gitCommitState(t, s, map[string]string{MetaFile: "version: [1\n"})
	st := fullState()
	res := mustUpdate(t, s, Op{Name: contracts.OpImport, Request: "import-1", Replace: func(tx *Tx) (*contracts.State, error) {
		return st, nil
	}})
	if tip(t, s) != res.Commit {
		t.Fatal("import did not move the ref")
	}
	got, err := mustSnapshot(t, s).Load()
	if err != nil {
		t.Fatal(err)
	}
	if ps := contracts.Validate(got); len(ps) > 0 {
		t.Fatalf("imported state invalid: %v", ps)
	}
	if ok, _ := s.Repo.FileAt(res.Commit, locate2(requestPath("import-1"))); !ok {
		t.Error("the import's request record is missing")
	}
	if r := mustUpdate(t, s, Op{Name: contracts.OpImport, Request: "import-1", Replace: func(tx *Tx) (*contracts.State, error) {
		t.Fatal("Replace ran on a replay")
		return nil, nil
	}}); !r.Replayed {
		t.Error("the import was not replayed")
	}

	// An invalid replacement is refused.
	bad := fullState()
	bad.Tasks[0].Priority = 0
	refused(t, s, Op{Name: contracts.OpImport, Replace: func(tx *Tx) (*contracts.State, error) { return bad, nil }}, "priority")
}

// gitFsck runs git fsck --strict and returns its combined output.
func gitFsck(dir string) (string, error) {
	cmd := exec.Command("git", "fsck", "--strict", "--no-dangling", "--no-progress")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}
