package ops

// Which task a claim may take, and which one a coder is offered.

import (
	"errors"
	"slices"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// checkClaim decides whether agent may claim t now, and how. Under the
// whole contract, a takeover that would give the task a third coder is
// ClaimExhausted, not an error: the claim then records the exhaustion for
// the planner.
func checkClaim(tx *cas.Tx, t *contracts.TaskSummary, agent string) (ClaimKind, error) {
	var kind ClaimKind
	switch t.Status {
	case contracts.Unclaimed:
		kind = ClaimFresh
	case contracts.Rejected, contracts.IntegrationFailed:
		switch {
		case t.AssignedTo == agent:
			kind = ClaimOwn
		case t.AssignedTo == "" || tx.LeaseEnded(t.LeaseExpires):
			kind = ClaimTakeover
		default:
			return "", contracts.Invalidf("task %s is %s and still leased to %s until %s%s", t.ID, t.Status, t.AssignedTo, t.LeaseExpires, tx.Held(t.LeaseExpires))
		}
	case contracts.Claimed:
		switch {
		case t.AssignedTo == agent:
			return "", contracts.Invalidf("%s already holds task %s", agent, t.ID)
		case tx.LeaseEnded(t.LeaseExpires):
			kind = ClaimExpired
		default:
			return "", contracts.Invalidf("task %s is claimed by %s until %s%s", t.ID, t.AssignedTo, t.LeaseExpires, tx.Held(t.LeaseExpires))
		}
	case contracts.Draft:
		return "", contracts.Invalidf("task %s is DRAFT: the planner has not finalized it", t.ID)
	default:
		return "", contracts.Invalidf("task %s is %s: it cannot be claimed", t.ID, t.Status)
	}
	for _, d := range t.DependsOn {
		st, err := taskStatus(tx, d)
		if err != nil {
			return "", err
		}
		if st != contracts.Merged {
			return "", contracts.Invalidf("task %s depends on %s, which is %s", t.ID, d, orUnknown(st))
		}
	}
	// Every task the loop below looks for is in flight: the claim index
	// holds them, so a claim does not read the board.
	idx, err := tx.InFlight()
	if err != nil {
		return "", err
	}
	m, err := tx.Meta()
	if err != nil {
		return "", err
	}
	whole := tx.Rules >= contracts.RulesWhole
	inFlight := 0
	for _, o := range idx {
		if o.ID == t.ID {
			continue
		}
		if o.Status == contracts.Claimed && o.AssignedTo == agent {
			return "", contracts.Invalidf("%s already holds task %s: submit, hand off or release it first", agent, o.ID)
		}
		// One active task per coder (liza-validate.sh): work awaiting
		// review or sent back counts, so a coder does not start a second
		// task before its first is through review.
		if whole && o.AssignedTo == agent && o.Status.Active() {
			return "", contracts.Invalidf("%s already holds task %s (%s): one active task per coder", agent, o.ID, o.Status)
		}
		if !o.Status.InFlight() {
			continue
		}
		inFlight++
		if a, b, ok := contracts.PathsOverlap(t.Paths, o.Paths); ok {
			return "", contracts.Invalidf("task %s owns %s, which overlaps %s owned by %s (%s)", t.ID, a, b, o.ID, o.Status)
		}
	}
	limit := m.Config.MaxInFlight
	if whole {
		limit = m.Config.InFlightLimit() // seed 001's window by default
	}
	if limit > 0 && !t.Status.InFlight() && inFlight >= limit {
		return "", contracts.Invalidf("%d tasks are in flight and max_in_flight is %d", inFlight, limit)
	}
	if whole && (kind == ClaimTakeover || kind == ClaimExpired) && t.AssignedTo != "" {
		full, err := tx.MustTask(t.ID)
		if err != nil {
			return "", err
		}
		failed := slices.Clone(full.FailedBy)
		if !failed.Contains(t.AssignedTo) && !parkedBy(tx, full, t.AssignedTo) {
			failed = append(failed, t.AssignedTo)
		}
		// Seed 003: "Hypothesis exhaustion | 2 coders failed"; seed 004:
		// "Reassign or rescope". The coder displaced is the one who
		// failed; with it, two have.
		if len(failed) >= contracts.FailedCodersThreshold {
			return ClaimExhausted, nil
		}
	}
	return kind, nil
}

// parkedBy reports whether t is parked by agent (contracts.ParkOf), whose
// supervisor stopped cleanly and let the lease go: under
// contracts.RulesSupervisorGone a coder that parked its task did not fail
// it.
func parkedBy(tx *cas.Tx, t *contracts.Task, agent string) bool {
	if tx.Rules < contracts.RulesSupervisorGone {
		return false
	}
	p, ok := contracts.ParkOf(t)
	return ok && p.By == agent
}

// bestClaim chooses the task a claim without ID takes: the best claimable
// task in seed order (the agent's own rejected work first), else the oldest
// claim whose lease ran out. Tasks in skip, and tasks the agent may not
// take, are passed over. The candidates are the tasks in flight (REJECTED
// and INTEGRATION_FAILED ones may be taken again) and the UNCLAIMED ones
// in claim order up to the first this agent may take: every later one is
// worse, so the claim reads the head of the queue, not the board. When
// the agent may take no UNCLAIMED task at all (see freshRefusal) the
// queue is not read, and that refusal is why.
func bestClaim(tx *cas.Tx, agent string, skip map[string]bool) (best string, why, err error) {
	idx, err := tx.InFlight()
	if err != nil {
		return "", nil, err
	}
	tasks := make([]*contracts.TaskSummary, 0, len(idx)+1)
	for _, t := range idx {
		tasks = append(tasks, t)
	}
	statusOf := func(id string) (contracts.Status, bool) {
		st, err := taskStatus(tx, id)
		return st, err == nil && st != ""
	}
	ok := func(t *contracts.TaskSummary) bool {
		if skip[t.ID] {
			return false
		}
		_, err := checkClaim(tx, t, agent)
		return err == nil
	}
	if why, err = freshRefusal(tx, agent); err != nil {
		return "", nil, err
	}
	if why == nil {
		err = tx.EachQueued(func(t *contracts.TaskSummary) (bool, error) {
			if contracts.Claimable(t, statusOf) && ok(t) {
				tasks = append(tasks, t)
				return false, nil
			}
			return true, nil
		})
		if err != nil {
			return "", nil, err
		}
	}
	if best := contracts.Best(tasks, statusOf, agent, func(t *contracts.TaskSummary) bool { return !ok(t) }); best != nil {
		return best.ID, nil, nil
	}
	expired, err := expiredClaims(tx, agent, skip)
	if err != nil || len(expired) > 0 {
		return firstID(expired), nil, err
	}
	return "", why, nil
}

// expiredClaims lists the claims whose lease ran out that agent may take
// and skip does not hold, best first: bestClaim's last resort, in the
// order it takes them one after another once no other task is left.
func expiredClaims(tx *cas.Tx, agent string, skip map[string]bool) ([]*contracts.TaskSummary, error) {
	idx, err := tx.InFlight()
	if err != nil {
		return nil, err
	}
	var out []*contracts.TaskSummary
	for _, t := range idx {
		if t.Status != contracts.Claimed || skip[t.ID] || !tx.LeaseEnded(t.LeaseExpires) {
			continue
		}
		if _, err := checkClaim(tx, t, agent); err == nil {
			out = append(out, t)
		}
	}
	// A CLAIMED task is never the agent's own work sent back, so this is
	// the order of contracts.Less.
	contracts.SortBest(out, agent)
	return out, nil
}

func firstID(ts []*contracts.TaskSummary) string {
	if len(ts) == 0 {
		return ""
	}
	return ts[0].ID
}

// freshRefusal is checkClaim's refusal of every UNCLAIMED task to agent
// (nil when it may take some): it holds a task already, or the window is
// full. Only a task's dependencies and paths are its own; a task that has
// neither is refused exactly what all are.
func freshRefusal(tx *cas.Tx, agent string) (error, error) {
	_, err := checkClaim(tx, &contracts.TaskSummary{Status: contracts.Unclaimed}, agent)
	var refused *contracts.Error
	if errors.As(err, &refused) && refused.Code == contracts.CodeInvalid {
		return refused, nil
	}
	return nil, err
}

// taskStatus is the status of a live or archived task ("" when unknown),
// read from its directory's index for live tasks.
func taskStatus(tx *cas.Tx, id string) (contracts.Status, error) {
	t, err := tx.Summary(id)
	if err != nil {
		return "", err
	}
	if t != nil {
		return t.Status, nil
	}
	a, err := tx.ArchivedTask(id)
	if err != nil || a == nil {
		return "", err
	}
	return a.Status, nil
}

func orUnknown(s contracts.Status) string {
	if s == "" {
		return "unknown"
	}
	return string(s)
}
