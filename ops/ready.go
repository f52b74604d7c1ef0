package ops

import (
	"context"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// ReadyTask is a task a coder could claim now.
type ReadyTask struct {
	ID          string           `json:"id"`
	Status      contracts.Status `json:"status"`
	Priority    int              `json:"priority"`
	Description string           `json:"description"`
	AssignedTo  string           `json:"assigned_to,omitempty"`
	// Kind is what a claim of it would be (claimed, resumed, taken_over,
	// reclaimed, or exhausted: the claim would block it for the planner).
	Kind ClaimKind `json:"kind"`
}

// Ready lists the tasks the service's agent (a coder, or any coder for
// the human operator) could claim now, in the order a claim without ID
// takes them: the first limit of them (0: all), and how many more there
// are, whose task files are not read. The head is the claim's own pick
// (bestClaim), so that what status --ready shows first is what git liza
// claim takes; the rest are the tasks checkClaim lets the agent take,
// in the order contracts.Best picks them (contracts.SortBest), then
// the claims whose lease ran out, as bestClaim takes them once no other
// task is left. Asking bestClaim again for every next task would read the
// board once per task listed (15 s at 1,000 tasks). It reads the board
// here, as status does.
func (s *Service) Ready(ctx context.Context, limit int) (tasks []ReadyTask, more int, err error) {
	out := []ReadyTask{}
	err = s.view(ctx, func(tx *cas.Tx) error {
		ids, err := s.readyIDs(tx)
		if err != nil {
			return err
		}
		if limit > 0 && len(ids) > limit {
			ids, more = ids[:limit], len(ids)-limit
		}
		idx, err := tx.Index()
		if err != nil {
			return err
		}
		for _, id := range ids {
			sum := idx[id]
			kind, err := checkClaim(tx, sum, s.Agent)
			if err != nil {
				return err
			}
			t, err := tx.MustTask(id)
			if err != nil {
				return err
			}
			out = append(out, ReadyTask{ID: id, Status: sum.Status, Priority: sum.Priority,
				Description: t.Description, AssignedTo: sum.AssignedTo, Kind: kind})
		}
		return nil
	})
	return out, more, err
}

// ReadyIDs is Ready's ids alone, in the same order, without reading a
// task file (completion offers them to claim).
func (s *Service) ReadyIDs(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.view(ctx, func(tx *cas.Tx) error {
		var err error
		ids, err = s.readyIDs(tx)
		return err
	})
	return ids, err
}

// readyIDs is the ids of Ready, in its order.
func (s *Service) readyIDs(tx *cas.Tx) ([]string, error) {
	idx, err := tx.Index()
	if err != nil {
		return nil, err
	}
	head, _, err := bestClaim(tx, s.Agent, nil)
	if err != nil || head == "" {
		return nil, err
	}
	statuses := map[string]contracts.Status{}
	statusOf := func(id string) (contracts.Status, bool) {
		st, ok := statuses[id]
		if !ok {
			st, _ = taskStatus(tx, id)
			statuses[id] = st
		}
		return st, st != ""
	}
	// Every claimable task is listed here, so what bestClaim would take
	// after them is its last resort: the claims whose lease ran out.
	aside := map[string]bool{head: true}
	var rest []*contracts.TaskSummary
	for _, t := range idx {
		if t.ID == head || !contracts.Claimable(t, statusOf) {
			continue
		}
		aside[t.ID] = true
		if _, err := checkClaim(tx, t, s.Agent); err == nil {
			rest = append(rest, t)
		}
	}
	contracts.SortBest(rest, s.Agent)
	expired, err := expiredClaims(tx, s.Agent, aside)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, 1+len(rest)+len(expired))
	ids = append(ids, head)
	for _, t := range append(rest, expired...) {
		ids = append(ids, t.ID)
	}
	return ids, nil
}

// waitsOn is the tasks t depends on that are not MERGED, for a live task
// that is not over: what it waits on before a coder may take it. live has
// the status of every live task; a dependency not among them is left with
// no status, for archived to settle.
func waitsOn(t *contracts.TaskSummary, live map[string]contracts.Status) []Waiting {
	if t.Status.Terminal() || len(t.DependsOn) == 0 {
		return nil
	}
	var out []Waiting
	for _, d := range t.DependsOn {
		if st := live[d]; st != contracts.Merged {
			out = append(out, Waiting{ID: d, Status: st})
		}
	}
	return out
}

// archived settles the dependencies NewBoard did not find among the live
// tasks: archived ones by their status (an archived MERGED task is waited
// on no more), the others unknown. The archive is read only when a board
// has such a dependency.
func archived(snap *cas.Snapshot, b *Board) error {
	var old map[string]contracts.Status
	for i := range b.Tasks {
		t := &b.Tasks[i]
		var keep []Waiting
		for _, w := range t.WaitsOn {
			if w.Status == "" {
				if old == nil {
					sums, err := snap.Summaries(cas.ArchiveDir)
					if err != nil {
						return err
					}
					old = map[string]contracts.Status{}
					for _, x := range sums {
						old[x.ID] = x.Status
					}
				}
				w.Status = old[w.ID]
				if w.Status == contracts.Merged {
					continue
				}
				if w.Status == "" {
					w.Status = "unknown"
				}
			}
			keep = append(keep, w)
		}
		t.WaitsOn = keep
	}
	return nil
}

// Waiting is a task another one waits on, and where it stands.
type Waiting struct {
	ID     string           `json:"id"`
	Status contracts.Status `json:"status"`
}

// TaskIDs lists the live tasks at the tip that keep accepts, in id order,
// from the board's index (no task file is read); none when there is no
// blackboard here. Completion offers each verb the tasks it can act on.
func (s *Service) TaskIDs(ctx context.Context, keep func(*contracts.TaskSummary) bool) ([]string, error) {
	tip, ok, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil || !ok {
		return nil, err
	}
	snap, err := cas.ReadSnapshot(s.Repo, tip)
	if err != nil {
		return nil, err
	}
	sums, err := snap.Summaries(cas.TasksDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, x := range sums {
		if keep(x) {
			out = append(out, x.ID)
		}
	}
	contracts.SortIDs(out)
	return out, nil
}
