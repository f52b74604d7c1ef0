package cas

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// TestViewFollowsTheBoard: a view refreshed from what each operation
// changed holds what reading the whole state holds, after operations of
// every kind: tasks added, changed, archived; agents registered and gone;
// handoffs; list entries appended and rewritten; the board's settings and
// plan; and a migration from layout 1.
func TestViewFollowsTheBoard(t *testing.T) { followTheBoard(t, false, "") }

// TestLiveViewFollowsTheBoard: a live view (a supervisor's) holds the same,
// except that the finished and archived tasks it read first are their
// index entries; every task in play is whole.
func TestLiveViewFollowsTheBoard(t *testing.T) { followTheBoard(t, true, "") }

// TestOwnViewFollowsTheBoard: a coder's view (Own) holds the same as a live
// view, except that the tasks in play assigned to another agent, or to
// none, are their index entries too; its own are whole.
func TestOwnViewFollowsTheBoard(t *testing.T) { followTheBoard(t, true, "coder-1") }

func followTheBoard(t *testing.T, live bool, own string) {
	s := initStore(t)
	old := gitCommitState(t, s, layout1Files(t, fullState(), nil))
	v := View{Live: live, Own: own}
	check := func(step string) {
		t.Helper()
		snap := mustSnapshot(t, s)
		got, err := v.Read(snap, true)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		want, err := snap.Load()
		if err != nil {
			t.Fatal(err)
		}
		got = whole(got)
		if live {
			want = inPlay(want, own)
		} else {
			want = whole(want)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the view\n%+v\nreading it whole\n%+v", step, got, want)
		}
	}
	if !live { // a live view's first read is of layout 2, from its index
		if _, err := v.Read(mustSnapshot(t, s), false); err != nil {
			t.Fatal(err)
		}
	}
	if mustSnapshot(t, s).Commit != old {
		t.Fatal("fixture")
	}
	r := rand.New(rand.NewPCG(3, 4))
	n := 0
	mine := 0
	for step := 0; step < 80; step++ {
		kind := r.IntN(10)
		mustUpdate(t, s, Op{Name: contracts.OpAdd, Agent: "planner-1", Apply: func(tx *Tx) (any, error) {
			switch kind {
			case 0, 1:
				n++
				id := fmt.Sprintf("v-%d", n)
				x := task(id)
				x.Created = fmt.Sprintf("2025-01-%02dT09:00:00Z", 1+r.IntN(28))
				tx.PutTask(x)
				return nil, tx.Plan(id)
			case 2:
				ids, err := tx.TaskIDs()
				if err != nil || len(ids) == 0 {
					return nil, err
				}
				x, err := tx.Task(ids[r.IntN(len(ids))])
				if err != nil {
					return nil, err
				}
				x.Priority = 1 + r.IntN(5)
				x.Description += " again"
				tx.PutTask(x)
			case 3:
				ids, err := tx.TaskIDs()
				if err != nil || len(ids) < 2 {
					return nil, err
				}
				x, err := tx.Task(ids[r.IntN(len(ids))])
				if err != nil {
					return nil, err
				}
				if x.ID == "task-2" || x.ID == "task-10" || len(x.DependsOn) > 0 {
					return nil, nil // others depend on them
				}
				x.Status, x.RescopeReason = contracts.Abandoned, "not needed"
				tx.ArchiveTask(x)
			case 4:
				tx.PutAgent(fmt.Sprintf("coder-%d", 1+r.IntN(4)), &contracts.Agent{Role: "coder", Status: "IDLE"})
			case 5:
				ids, err := tx.AgentIDs()
				if err != nil || len(ids) == 0 {
					return nil, err
				}
				tx.RemoveAgent(ids[r.IntN(len(ids))])
			case 6:
				_, err := tx.Append(ListHumanNotes, &contracts.HumanNote{Timestamp: stamp, Message: fmt.Sprint("note ", step)})
				if err == nil {
					_, err = tx.Append(ListAlignment, &contracts.AlignmentEntry{Time: stamp, Event: "step"})
				}
				return nil, err
			case 7:
				ds, err := tx.Discoveries()
				if err != nil || len(ds) == 0 {
					return nil, err
				}
				d := *ds[0]
				d.Description += " (seen again)"
				tx.PutDiscovery(1, &d)
			case 8:
				m, err := tx.Meta()
				if err != nil {
					return nil, err
				}
				m.Control = &contracts.Control{Mode: contracts.ModePaused, Since: stamp, By: "human", Reason: fmt.Sprint(step)}
				tx.PutMeta(m)
			case 9: // a task claimed by a coder, or given back
				ids, err := tx.TaskIDs()
				if err != nil || len(ids) == 0 {
					return nil, err
				}
				x, err := tx.Task(ids[r.IntN(len(ids))])
				if err != nil || x.Status.Terminal() {
					return nil, err
				}
				busy := map[string]bool{}
				for _, id := range ids {
					if y, err := tx.Task(id); err == nil && y.Status == contracts.Claimed {
						busy[y.AssignedTo] = true
					}
				}
				coder := fmt.Sprintf("coder-%d", 1+r.IntN(3))
				switch {
				case x.Status == contracts.Unclaimed && !busy[coder]:
					x.Status, x.AssignedTo, x.LeaseExpires = contracts.Claimed, coder, stamp
					x.Worktree, x.BaseCommit = ".worktrees/"+x.ID, "abc"
					mine++
				case x.Status == contracts.Claimed:
					x.Status, x.AssignedTo, x.LeaseExpires, x.Worktree, x.BaseCommit = contracts.Unclaimed, "", "", "", ""
				default:
					return nil, nil
				}
				x.Description += " (claimed)"
				tx.PutTask(x)
			}
			return nil, nil
		}})
		check(fmt.Sprintf("step %d (kind %d)", step, kind))
	}
	if mine < 5 {
		t.Fatalf("only %d claims: the board did not change enough to test a coder's view", mine)
	}
}

// inPlay is st with its finished and archived tasks (with own, also every
// task not assigned to own) cut down to their index entries, as a live
// view holds them; no task's dependencies or paths are an empty list, since
// the index does not tell none from empty.
func inPlay(st *contracts.State, own string) *contracts.State {
	return cutTasks(st, func(t *contracts.Task, archived bool) bool {
		return archived || t.Status.Terminal() || own != "" && t.AssignedTo != own
	})
}

// whole is st with no task's dependencies or paths an empty list (see
// inPlay), to compare a view with.
func whole(st *contracts.State) *contracts.State {
	return cutTasks(st, func(*contracts.Task, bool) bool { return false })
}

func cutTasks(st *contracts.State, cut func(t *contracts.Task, archived bool) bool) *contracts.State {
	out := *st
	each := func(ts []*contracts.Task, archived bool) []*contracts.Task {
		var cs []*contracts.Task
		for _, t := range ts {
			c := *t
			if cut(t, archived) {
				c = *t.Summary().Stub()
			}
			if len(c.DependsOn) == 0 {
				c.DependsOn = nil
			}
			if len(c.Paths) == 0 {
				c.Paths = nil
			}
			cs = append(cs, &c)
		}
		return cs
	}
	out.Tasks, out.Archive = each(st.Tasks, false), each(st.Archive, true)
	return &out
}

// TestLoadLive: the finished and archived tasks come from the index
// without reading their files (here, made unreadable), and the tasks in
// play are read whole.
func TestLoadLive(t *testing.T) {
	s := initStore(t)
	done := task("done-1")
	done.Status, done.AssignedTo, done.Description = contracts.Merged, "coder-1", "finished long ago"
	done.MergeCommit = strings.Repeat("a", 40)
	gone := task("gone-1")
	gone.Status, gone.RescopeReason = contracts.Abandoned, "not needed"
	mustUpdate(t, s, Op{Name: contracts.OpAdd, Apply: func(tx *Tx) (any, error) {
		tx.PutTask(task("live-1"))
		tx.PutTask(claimed("live-2", "coder-2"))
		tx.PutTask(done)
		tx.ArchiveTask(gone)
		return nil, nil
	}})
	snap := mustSnapshot(t, s)
	whole, err := snap.Load()
	if err != nil {
		t.Fatal(err)
	}
	// Remove the finished tasks' files from the object store: LoadLive must
	// not need them.
	loosen(t, s.Repo.Dir())
	s = openStore(t, s.Repo.Dir()) // a process that has not read the pack
	for _, path := range []string{EntityFile(TasksDir, "done-1"), EntityFile(ArchiveDir, "gone-1")} {
		e, ok, err := snap.file(path)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", path, ok, err)
		}
		hex := e.ID.String()
		if err := os.Remove(filepath.Join(s.Repo.CommonDir, "objects", hex[:2], hex[2:])); err != nil {
			t.Fatal(err)
		}
	}
	snap = mustSnapshot(t, s)
	if _, err := snap.Load(); err == nil {
		t.Fatal("Load read the whole board without the finished tasks' files")
	}
	got, err := snap.LoadLive()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(inPlay(got, ""), inPlay(whole, "")) {
		t.Fatalf("LoadLive\n%+v\nwant\n%+v", got, inPlay(whole, ""))
	}
	if d := got.Task("done-1"); d == nil || d.Status != contracts.Merged || d.AssignedTo != "coder-1" || d.Description != "" {
		t.Fatalf("the finished task: %+v", d)
	}
	if l := got.Task("live-2"); l == nil || l.Description != whole.Task("live-2").Description || len(l.History) != len(whole.Task("live-2").History) {
		t.Fatalf("a task in play is not whole: %+v", l)
	}
}
