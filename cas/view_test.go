package cas

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// TestViewFollowsTheBoard: a view refreshed from what each operation
// changed holds what reading the whole state holds, after operations of
// every kind: tasks added, changed, archived; agents registered and gone;
// handoffs; list entries appended and rewritten; the board's settings and
// plan; and a migration from layout 1.
func TestViewFollowsTheBoard(t *testing.T) {
	s := initStore(t)
	old := gitCommitState(t, s, layout1Files(t, fullState(), nil))
	var v View
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
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the view\n%+v\nreading it whole\n%+v", step, got, want)
		}
	}
	if _, err := v.Read(mustSnapshot(t, s), false); err != nil {
		t.Fatal(err)
	}
	if mustSnapshot(t, s).Commit != old {
		t.Fatal("fixture")
	}
	r := rand.New(rand.NewPCG(3, 4))
	n := 0
	for step := 0; step < 60; step++ {
		kind := r.IntN(9)
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
			}
			return nil, nil
		}})
		check(fmt.Sprintf("step %d (kind %d)", step, kind))
	}
}
