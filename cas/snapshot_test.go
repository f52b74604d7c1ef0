package cas

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// fullState is a valid state with something in every section of the
// layout, tasks out of board order and a list longer than nine entries.
func fullState() *contracts.State {
	t10 := task("task-10")
	t2 := task("task-2")
	t1 := task("task-1")
	t1.Created = "2025-01-09T09:00:00Z" // oldest: first on the board
	merged := task("task-0")
	merged.Status, merged.MergeCommit = contracts.Merged, "abc"
	notes := make([]*contracts.HumanNote, 12)
	for i := range notes {
		notes[i] = &contracts.HumanNote{Timestamp: stamp, Message: fmt.Sprintf("note %d", i+1)}
	}
	m := validMeta()
	return &contracts.State{
		Version: 1,
		Goal: contracts.Goal{
			ID: "goal-1", Description: "build it", Status: "IN_PROGRESS", Created: stamp,
			AlignmentHistory: []*contracts.AlignmentEntry{
				{Time: stamp, Event: "added", Task: "task-1"},
				{Time: stamp, Event: "added", Task: "task-2"},
			},
		},
		Config: m.Config,
		Sprint: m.Sprint,
		Agents: map[string]*contracts.Agent{
			"coder-1":   {Role: "coder", Status: "IDLE"},
			"planner-1": {Role: "planner", Status: "IDLE"},
		},
		Tasks:   []*contracts.Task{t10, t2, t1},
		Archive: []*contracts.Task{merged},
		Anomalies: []*contracts.Anomaly{{
			ID: "anomaly-1", Type: "spec_ambiguity", TaskID: "task-1", LoggedBy: "coder-1", Timestamp: stamp,
		}},
		Discovered:  []*contracts.Discovery{{ID: "disc-1", By: "coder-1", Description: "slow", Severity: "low"}},
		Handoff:     map[string]*contracts.Handoff{"task-1": {Agent: "coder-1", Time: stamp, Summary: "half", NextAction: "finish"}},
		HumanNotes:  notes,
		SpecChanges: []*contracts.SpecChange{{Timestamp: stamp, Spec: "specs/x.md", Change: "more"}},
		Extra:       contracts.Extra{"custom_section": "kept"},
	}
}

func TestWriteStateLayout(t *testing.T) {
	s := newStore(t)
	st := fullState()
	if ps := contracts.Validate(st); len(ps) > 0 {
		t.Fatalf("fixture invalid: %v", ps)
	}
	tree, err := s.writeState(st, contracts.RulesLastMile)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"agents/coder-1.yaml", "agents/planner-1.yaml",
		"alignment_history/000/00/000001.yaml", "alignment_history/000/00/000002.yaml",
		"anomalies/000/00/000001.yaml",
		"archive/8/7/index", "archive/8/7/task-0.yaml",
		"discovered/000/00/000001.yaml",
		"handoff/task-1.yaml",
	}
	for i := 1; i <= 12; i++ {
		want = append(want, fmt.Sprintf("human_notes/000/00/%06d.yaml", i))
	}
	want = append(want, LayoutFile, "liza.yaml", "spec_changes/000/00/000001.yaml")
	for _, id := range []string{"task-1", "task-10", "task-2"} {
		want = append(want, "tasks/"+bucket(id)+"/"+IndexFile, "tasks/"+bucket(id)+"/"+id+".yaml")
	}
	sort.Strings(want)
	if got := lsTree(t, s, tree); !reflect.DeepEqual(got, want) {
		t.Fatalf("tree files:\n%q\nwant:\n%q", got, want)
	}

	// The same files built by git's own plumbing give the same tree.
	files, err := splitState(st)
	if err != nil {
		t.Fatal(err)
	}
	strs := map[string]string{}
	for p, b := range files {
		strs[p] = string(b)
	}
	if g := gitTree(t, s.Repo.Dir(), strs); g != tree.String() {
		t.Fatalf("writeState tree %s, git mktree builds %s", tree, g)
	}
	if out := git(t, s.Repo.Dir(), "fsck", "--strict", "--no-dangling", "--no-progress"); out != "" {
		t.Errorf("git fsck: %s", out)
	}

	// Each entity file is that entity alone; liza.yaml holds no lists.
	var meta Meta
	if err := contracts.DecodeYAML(files[MetaFile], &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Goal.AlignmentHistory != nil || meta.Extra["custom_section"] != "kept" {
		t.Errorf("liza.yaml: %s", files[MetaFile])
	}
	var t10 contracts.Task
	if err := contracts.DecodeYAML(files[locate2("tasks/task-10.yaml")], &t10); err != nil || t10.ID != "task-10" {
		t.Errorf("tasks/task-10.yaml: %v\n%s", err, files[locate2("tasks/task-10.yaml")])
	}
}

func TestLoadRoundTrip(t *testing.T) {
	s := newStore(t)
	st := fullState()
	want, err := contracts.MarshalState(st)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s.writeState(st, contracts.RulesLastMile)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := s.Repo.WriteCommit(tree, nil, refstore.Signature{Name: "t", Email: "t", When: now}, "state\n")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := ReadSnapshot(s.Repo, commit)
	if err != nil {
		t.Fatal(err)
	}
	got, err := snap.Load()
	if err != nil {
		t.Fatal(err)
	}

	// Tasks come back in board order: oldest first, then natural id order.
	var ids []string
	for _, x := range got.Tasks {
		ids = append(ids, x.ID)
	}
	if !reflect.DeepEqual(ids, []string{"task-1", "task-2", "task-10"}) {
		t.Errorf("task order %q", ids)
	}
	// Lists come back in order, past nine entries.
	for i, n := range got.HumanNotes {
		if n.Message != fmt.Sprintf("note %d", i+1) {
			t.Fatalf("human_notes[%d] = %q", i, n.Message)
		}
	}

	exp := fullState()
	SortTasks(exp.Tasks)
	SortTasks(exp.Archive)
	wantSorted, _ := contracts.MarshalState(exp)
	gotYAML, err := contracts.MarshalState(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(gotYAML) != string(wantSorted) {
		t.Fatalf("round trip differs.\ngot:\n%s\nwant:\n%s", gotYAML, wantSorted)
	}
	if string(want) == string(wantSorted) {
		t.Fatal("fixture is already in board order: the sort is not tested")
	}
	if ps := contracts.Validate(got); len(ps) > 0 {
		t.Errorf("loaded state invalid: %v", ps)
	}
}

func TestLoadWithoutState(t *testing.T) {
	s := newStore(t)
	snap, err := ReadSnapshot(s.Repo, refstore.Hash{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Exists() {
		t.Fatal("the zero commit exists")
	}
	_, err = snap.Load()
	wantCode(t, err, contracts.CodeInvalid)
	if ids, err := snap.IDs(TasksDir); err != nil || len(ids) != 0 {
		t.Errorf("IDs on the empty state: %v, %v", ids, err)
	}
}

func TestReadSnapshotOfMissingCommit(t *testing.T) {
	s := newStore(t)
	_, err := ReadSnapshot(s.Repo, refstore.Hash{1, 2, 3})
	wantCode(t, err, contracts.CodeInconsistent)
}

// TestDeleteLastFileRemovesDirectory: a directory whose last file goes
// disappears from the tree, as git would have it (git has no empty trees).
func TestDeleteLastFileRemovesDirectory(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, Op{Name: contracts.OpRegister, Request: "reg-1", Apply: func(tx *Tx) (any, error) {
		tx.PutAgent("coder-1", &contracts.Agent{Role: "coder", Status: "IDLE"})
		tx.PutTask(task("task-1"))
		return nil, nil
	}})
	top := func() []string {
		out := git(t, s.Repo.Dir(), "ls-tree", "--name-only", refstore.StateRef)
		var names []string
		for _, n := range splitLines(out) {
			names = append(names, n)
		}
		return names
	}
	if got := top(); !reflect.DeepEqual(got, []string{"agents", ClaimsDir, LayoutFile, "liza.yaml", "requests", "tasks"}) {
		t.Fatalf("top level %q", got)
	}
	mustUpdate(t, s, Op{Name: contracts.OpAbandon, Apply: func(tx *Tx) (any, error) {
		tx.RemoveAgent("coder-1")
		t1, err := tx.MustTask("task-1")
		if err != nil {
			return nil, err
		}
		t1.Status = contracts.Abandoned
		tx.ArchiveTask(t1)
		return nil, nil
	}})
	if got := top(); !reflect.DeepEqual(got, []string{"archive", ClaimsDir, LayoutFile, "liza.yaml", "requests"}) {
		t.Fatalf("top level after removing the last agent and task: %q", got)
	}
	if got := lsTree(t, s, mustSnapshot(t, s).Tree); !reflect.DeepEqual(got, []string{"archive/0/4/index", "archive/0/4/task-1.yaml", inflightFile, LayoutFile, "liza.yaml", locate2(requestPath("reg-1"))}) {
		t.Fatalf("files %q", got)
	}

	// applyFiles directly: removing the only file two levels down removes
	// both levels; removing everything leaves the zero tree.
	snap := mustSnapshot(t, s)
	tree, err := applyFiles(snap, "", map[string][]byte{locate2(requestPath("reg-1")): nil})
	if err != nil {
		t.Fatal(err)
	}
	if got := lsTree(t, s, tree); !reflect.DeepEqual(got, []string{"archive/0/4/index", "archive/0/4/task-1.yaml", inflightFile, LayoutFile, "liza.yaml"}) {
		t.Fatalf("after deleting the request record: %q", got)
	}
	tree, err = applyFiles(snap, "", map[string][]byte{locate2(requestPath("reg-1")): nil, "archive/0/4/task-1.yaml": nil, "archive/0/4/index": nil, inflightFile: nil, MetaFile: nil, LayoutFile: nil})
	if err != nil || !tree.IsZero() {
		t.Fatalf("deleting every file: %s, %v; want the zero hash", tree, err)
	}
	// Deleting what is not there changes nothing.
	tree, err = applyFiles(snap, "", map[string][]byte{"agents/nobody.yaml": nil, "nowhere/deep/x.yaml": nil})
	if err != nil || tree != snap.Tree {
		t.Fatalf("deleting missing files: %s, %v; want %s", tree, err, snap.Tree)
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func TestTxReadsItsOwnWrites(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, putTasks(task("task-1")))
	mustUpdate(t, s, Op{Name: contracts.OpEdit, Apply: func(tx *Tx) (any, error) {
		tx.PutTask(task("task-2"))
		ids, err := tx.TaskIDs()
		if err != nil {
			return nil, err
		}
		sort.Strings(ids)
		if !reflect.DeepEqual(ids, []string{"task-1", "task-2"}) {
			t.Errorf("TaskIDs %q", ids)
		}
		t1, err := tx.MustTask("task-1")
		if err != nil {
			return nil, err
		}
		t1.Status = contracts.Abandoned
		tx.ArchiveTask(t1)
		if live, archived, err := tx.HasTask("task-1"); err != nil || live || !archived {
			t.Errorf("HasTask after archiving: %v, %v, %v", live, archived, err)
		}
		if x, _ := tx.Task("task-1"); x != nil {
			t.Error("an archived task is still live")
		}
		if x, _ := tx.AnyTask("task-1"); x == nil || x.Status != contracts.Abandoned {
			t.Errorf("AnyTask = %+v", x)
		}
		if _, err := tx.MustTask("task-1"); err == nil {
			t.Error("MustTask of an archived task succeeded")
		}
		if _, err := tx.MustTask("task-404"); err == nil {
			t.Error("MustTask of a missing task succeeded")
		}
		ids, _ = tx.TaskIDs()
		if !reflect.DeepEqual(ids, []string{"task-2"}) {
			t.Errorf("TaskIDs after archiving %q", ids)
		}
		return nil, nil
	}})
}

func TestAppendNumbersAcrossOperations(t *testing.T) {
	s := initStore(t)
	note := func(msg string) Op {
		return Op{Name: contracts.OpNote, Apply: func(tx *Tx) (any, error) {
			n, err := tx.Append(ListHumanNotes, &contracts.HumanNote{Timestamp: tx.NowString(), Message: msg})
			if err != nil {
				return nil, err
			}
			n2, err := tx.Append(ListHumanNotes, &contracts.HumanNote{Timestamp: tx.NowString(), Message: msg + "+"})
			if err != nil {
				return nil, err
			}
			l, _ := tx.ListLen(ListHumanNotes)
			return []int{n, n2, l}, nil
		}}
	}
	if r := mustUpdate(t, s, note("a")); string(r.Value) != "[1,2,2]" {
		t.Errorf("first op %s", r.Value)
	}
	if r := mustUpdate(t, s, note("b")); string(r.Value) != "[3,4,4]" {
		t.Errorf("second op %s", r.Value)
	}
	st, err := mustSnapshot(t, s).Load()
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, n := range st.HumanNotes {
		msgs = append(msgs, n.Message)
	}
	if !reflect.DeepEqual(msgs, []string{"a", "a+", "b", "b+"}) {
		t.Errorf("notes %q", msgs)
	}
}
