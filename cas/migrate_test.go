package cas

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// layout1Files lays st out as boards written before layout 2 were: flat
// directories, the planned ids in liza.yaml, one index at the root and
// request records under requests/<xx>/.
func layout1Files(t *testing.T, st *contracts.State, requests map[string]string) map[string]string {
	t.Helper()
	files := map[string]string{}
	put := func(path string, v any) {
		b, err := contracts.EncodeYAML(v)
		if err != nil {
			t.Fatal(err)
		}
		files[path] = string(b)
	}
	meta := Meta{Version: st.Version, Goal: st.Goal, Config: st.Config, Sprint: st.Sprint, Extra: st.Extra}
	meta.Goal.AlignmentHistory = nil
	put(MetaFile, &meta)
	for _, x := range st.Tasks {
		put(EntityFile(TasksDir, x.ID), x)
	}
	for _, x := range st.Archive {
		put(EntityFile(ArchiveDir, x.ID), x)
	}
	for id, a := range st.Agents {
		put(EntityFile(AgentsDir, id), a)
	}
	for id, h := range st.Handoff {
		put(EntityFile(HandoffDir, id), h)
	}
	for i, e := range st.Goal.AlignmentHistory {
		put(ListAlignment+"/"+seqName(i+1), e)
	}
	for i, e := range st.HumanNotes {
		put(ListHumanNotes+"/"+seqName(i+1), e)
	}
	for i, e := range st.Anomalies {
		put(ListAnomalies+"/"+seqName(i+1), e)
	}
	for i, e := range st.Discovered {
		put(ListDiscovered+"/"+seqName(i+1), e)
	}
	for i, e := range st.SpecChanges {
		put(ListSpecChanges+"/"+seqName(i+1), e)
	}
	files[IndexFile] = "# liza index v1: id status priority created assigned_to reviewing_by lease_expires review_lease_expires depends_on paths\n"
	for id, rec := range requests {
		files[requestPath(id)] = rec
	}
	return files
}

func noteOp(msg string) Op {
	return Op{Name: contracts.OpNote, Apply: func(tx *Tx) (any, error) {
		_, err := tx.Append(ListHumanNotes, &contracts.HumanNote{Timestamp: stamp, Message: msg})
		return nil, err
	}}
}

// TestMigrateLayout1: a board written in layout 1 reads as it was, and the
// first operation on it writes the whole state anew in layout 2 with
// nothing lost: the same state plus the operation's change, the request
// records still answering, and the same tree whoever replays it.
func TestMigrateLayout1(t *testing.T) {
	s := initStore(t)
	st := fullState()
	st.Sprint.Scope.Planned = contracts.StringList{"task-2", "task-1", "task-10"}
	rec := `{"op":"note","result":null}`
	old := gitCommitState(t, s, layout1Files(t, st, map[string]string{"note-1": rec}))
	snap, err := ReadSnapshot(s.Repo, old)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Layout() != 1 {
		t.Fatalf("layout %d, want 1", snap.Layout())
	}
	before, err := snap.Load()
	if err != nil {
		t.Fatal(err)
	}
	if ps := contracts.Validate(before); len(ps) > 0 {
		t.Fatalf("layout 1 fixture invalid: %v", ps)
	}
	if !reflect.DeepEqual(before.Sprint.Scope.Planned, st.Sprint.Scope.Planned) {
		t.Fatalf("planned read from layout 1: %q", before.Sprint.Scope.Planned)
	}

	// A replay of the operation on the layout 1 parent makes the tree the
	// live write makes.
	replayed, _, _, err := s.Replay(snap, noteOp("after"), now, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := mustUpdate(t, s, noteOp("after"))
	after := mustSnapshot(t, s)
	if after.Layout() != 2 {
		t.Fatalf("layout after an operation: %d", after.Layout())
	}
	if c := readCommit(t, s, res.Commit); c.Tree != replayed || c.Parents[0] != old {
		t.Fatalf("commit tree %s (replay made %s), parent %v", c.Tree, replayed, c.Parents)
	}
	got, err := after.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := before
	want.HumanNotes = append(want.HumanNotes, &contracts.HumanNote{Timestamp: stamp, Message: "after"})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("state after the migration:\n%+v\nwant\n%+v", got, want)
	}
	if rb, err := RebuildIndex(after); err != nil || rb != nil {
		t.Fatalf("the migrated indexes do not match the tasks: %v %v", rb, err)
	}
	files := strings.Join(lsTree(t, s, after.Tree), "\n")
	for _, gone := range []string{"\n" + IndexFile + "\n", "tasks/task-1.yaml", "human_notes/000001.yaml\n"} {
		if strings.Contains("\n"+files+"\n", gone) {
			t.Errorf("layout 1 file %q left in the tree:\n%s", gone, files)
		}
	}
	if ok, _ := s.Repo.FileAt(res.Commit, locate2(requestPath("note-1"))); !ok {
		t.Error("the request record did not move to its layout 2 place")
	}
	r, err := s.Update(context.Background(), Op{Name: contracts.OpNote, Request: "note-1", Apply: func(tx *Tx) (any, error) {
		t.Fatal("a request made before the migration ran again")
		return nil, nil
	}})
	if err != nil || !r.Replayed {
		t.Fatalf("request after the migration: %+v, %v", r, err)
	}
	if out, err := gitFsck(s.Repo.Dir()); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// TestMigrateOnlyWithAChange: an operation that changes nothing on a
// layout 1 board makes no commit.
func TestMigrateOnlyWithAChange(t *testing.T) {
	s := initStore(t)
	old := gitCommitState(t, s, layout1Files(t, fullState(), nil))
	res := mustUpdate(t, s, Op{Name: contracts.OpNote, Apply: func(tx *Tx) (any, error) { return nil, nil }})
	if res.Commit != old || tip(t, s) != old {
		t.Fatal("an operation that changed nothing committed a migration")
	}
}

// TestPlannedAcrossFiles: planned ids go 64 to a file, in order, across
// operations.
func TestPlannedAcrossFiles(t *testing.T) {
	s := initStore(t)
	var all []string
	for _, n := range []int{50, 14, 1, 65} {
		mustUpdate(t, s, Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
			for range n {
				id := fmt.Sprintf("task-%d", len(all)+1)
				all = append(all, id)
				tx.PutTask(task(id))
				if err := tx.Plan(id); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}})
	}
	snap := mustSnapshot(t, s)
	st, err := snap.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual([]string(st.Sprint.Scope.Planned), all) {
		t.Fatalf("planned %q\nwant %q", st.Sprint.Scope.Planned, all)
	}
	var files []string
	for _, f := range lsTree(t, s, snap.Tree) {
		if strings.HasPrefix(f, PlannedDir+"/") {
			files = append(files, f)
		}
	}
	if want := []string{"planned/000/00", "planned/000/01", "planned/000/02"}; !reflect.DeepEqual(files, want) {
		t.Fatalf("planned files %q, want %q", files, want)
	}
	if n, last, err := snap.plannedLen(); n != 130 || string(last) != "task-129\ntask-130\n" || err != nil {
		t.Fatalf("plannedLen %d %q %v", n, last, err)
	}
	var meta Meta
	if err := contracts.DecodeYAML([]byte(tipFile(t, s, MetaFile)), &meta); err != nil || len(meta.Sprint.Scope.Planned) != 0 {
		t.Fatalf("liza.yaml holds planned ids: %v %v", meta.Sprint.Scope.Planned, err)
	}
}

// TestListsAcrossDirectories: a list keeps its order across its 64-entry
// directories and its 4096-entry ones, and an append writes one entry.
func TestListsAcrossDirectories(t *testing.T) {
	s := initStore(t)
	const n = 4097
	mustUpdate(t, s, Op{Name: contracts.OpNote, Apply: func(tx *Tx) (any, error) {
		for i := 1; i <= n; i++ {
			// 200 different notes (fewer objects to write), repeating
			// out of step with the directories' 64.
			if _, err := tx.Append(ListHumanNotes, &contracts.HumanNote{Timestamp: stamp, Message: fmt.Sprint(i % 200)}); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}})
	res := mustUpdate(t, s, noteOp(fmt.Sprint((n+1)%200)))
	snap := mustSnapshot(t, s)
	if got, err := snap.ListLen(ListHumanNotes); got != n+1 || err != nil {
		t.Fatalf("ListLen %d, %v", got, err)
	}
	st, err := snap.Load()
	if err != nil {
		t.Fatal(err)
	}
	for i, note := range st.HumanNotes {
		if note.Message != fmt.Sprint((i+1)%200) {
			t.Fatalf("note %d says %q", i+1, note.Message)
		}
	}
	if len(st.HumanNotes) != n+1 {
		t.Fatalf("%d notes", len(st.HumanNotes))
	}
	for _, p := range []string{"human_notes/000/63/004096.yaml", "human_notes/001/00/004097.yaml", "human_notes/001/00/004098.yaml"} {
		if ok, _ := s.Repo.FileAt(res.Commit, p); !ok {
			t.Errorf("%s missing", p)
		}
	}
	// The last append changed one entry file and the three directories
	// above it, and nothing else of the list.
	prev := readCommit(t, s, res.Commit).Parents[0]
	diff := git(t, s.Repo.Dir(), "diff-tree", "-r", "--name-only", "-t", prev.String(), res.Commit.String())
	if want := "human_notes\nhuman_notes/001\nhuman_notes/001/00\nhuman_notes/001/00/004098.yaml"; diff != want {
		t.Fatalf("the append changed\n%s\nwant\n%s", diff, want)
	}
}

// TestLayout2TreeChecked: a layout 2 tree with an entity out of its place
// is refused, as an unknown entry would be.
func TestLayout2TreeChecked(t *testing.T) {
	good, err := splitState(fullState())
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(files map[string]string){
		"task in another id's directory": func(f map[string]string) {
			f["tasks/f/f/task-1.yaml"] = f[locate2("tasks/task-1.yaml")]
			delete(f, locate2("tasks/task-1.yaml"))
		},
		"list entry out of its place": func(f map[string]string) {
			f["human_notes/000/01/000001.yaml"] = f["human_notes/000/00/000001.yaml"]
			delete(f, "human_notes/000/00/000001.yaml")
		},
		"layout from the future":   func(f map[string]string) { f[LayoutFile] = "3\n" },
		"planned file not full":    func(f map[string]string) { f["planned/000/00"] = "task-1\n"; f["planned/000/01"] = "task-2\n" },
		"planned id not an id":     func(f map[string]string) { f["planned/000/00"] = "../x\n" },
		"layout 1 entry":           func(f map[string]string) { f[IndexFile] = "x" },
		"request record misplaced": func(f map[string]string) { f[requestPath("r-1")] = "{}" },
	} {
		t.Run(name, func(t *testing.T) {
			s := initStore(t)
			files := map[string]string{}
			for p, b := range good {
				files[p] = string(b)
			}
			edit(files)
			bad := gitCommitState(t, s, files)
			snap, err := ReadSnapshot(s.Repo, bad)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := snap.Load(); err == nil {
				t.Fatal("loaded")
			} else if e, ok := err.(*contracts.Error); !ok || e.Code != contracts.CodeInconsistent {
				t.Fatalf("error %v, want an inconsistent state", err)
			}
			updateRefusedInconsistent(t, s)
		})
	}
}
