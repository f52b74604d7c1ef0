package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// next finds the role's next piece of work and claims it. acted reports
// work done without an agent (a merge, completing the goal), after which
// the loop looks at the board again at once.
func (s *sup) next(ctx context.Context, st *contracts.State) (*work, bool, error) {
	switch s.Role {
	case contracts.RoleCoder:
		return s.nextCoder(ctx, st)
	case contracts.RoleReviewer:
		return s.nextReviewer(ctx, st)
	case contracts.RolePlanner:
		return s.nextPlanner(ctx, st)
	}
	return nil, false, fmt.Errorf("no supervisor for role %s", s.Role.IDPrefix())
}

// waitable reports whether a refusal means "nothing for this agent now"
// (a precondition or a lost race) rather than a failure.
func waitable(err error) bool {
	c := ops.Class(err)
	return c == contracts.CodeInvalid || c == contracts.CodeContention
}

func (s *sup) nextCoder(ctx context.Context, st *contracts.State) (*work, bool, error) {
	for _, t := range st.Tasks {
		if t.AssignedTo == s.ID && t.Status == contracts.Claimed {
			return s.resume(ctx, st, t, t.LeaseExpires)
		}
	}
	may, awaited := s.mayClaim(st)
	if !may {
		if time.Since(s.tidied) >= tidyIdle {
			s.tidy(ctx) // what was merged while this coder waits
		}
		if awaited != nil {
			s.awaited = awaited.ID
			s.waitOn = []string{cas.EntityFile(cas.TasksDir, awaited.ID), cas.EntityFile(cas.ArchiveDir, awaited.ID), cas.EntityFile(cas.AgentsDir, s.ID)}
		}
		return nil, false, nil
	}
	if s.fixWaits(st) {
		return nil, false, nil
	}
	if err := s.setupHeld(); err != nil {
		return nil, false, err
	}
	if s.Remote || time.Since(s.tidied) >= tidyIdle {
		s.tidy(ctx)
	}
	var c *ops.ClaimResult
	err := s.do(func() (err error) { c, err = s.Board.Claim(ctx, ops.ClaimRequest{}); return })
	if err != nil {
		if wait, ok := s.setupFailed(err); ok {
			return nil, false, wait
		}
		if waitable(err) {
			s.waiting("no task to claim: " + err.Error())
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("claim: %w", err)
	}
	s.setupWorked()
	if c.Pick != "" {
		s.eventf(EventClaimed, c.ID, "claimed %s (%s): %s", c.ID, c.Kind, c.Pick)
	} else {
		s.eventf(EventClaimed, c.ID, "claimed %s (%s)", c.ID, c.Kind)
	}
	return s.reload(ctx, c.ID)
}

// tidy removes this clone's worktrees of MERGED tasks (see
// ops.TidyMerged): in remote mode the merge on the reviewer's clone
// cannot remove them, and each is a whole checkout; in local mode the
// merge removes them, unless it was killed before. A coder tidies before
// each claim in remote mode, at most every tidyIdle in local mode and
// while it may not claim, and as it stops at the goal's completion.
func (s *sup) tidy(ctx context.Context) {
	s.tidied = time.Now()
	var done []ops.PruneItem
	err := s.do(func() (err error) { done, err = s.Board.TidyMerged(ctx); return })
	for _, d := range done {
		s.eventf(EventInfo, d.ID, "removed %s: %s", d.Path, d.Reason)
	}
	if err != nil && !s.holding(err) {
		s.eventf(EventError, "", "removing the worktrees of merged tasks: %v", err)
	}
}

// clearLocks removes the locks of git's that a git of an earlier session
// of task left in its checkout wd, killed holding the checkout's index
// (see refstore.Repo.ClearWorktreeLocks): every add and commit there
// would fail, and the sessions crash until the task is blocked.
func (s *sup) clearLocks(ctx context.Context, task, wd string) {
	removed, err := s.Repo.ClearWorktreeLocks(ctx, wd)
	for _, l := range removed {
		s.eventf(EventInfo, task, "%s", l)
	}
	if err != nil && ctx.Err() == nil {
		s.eventf(EventError, task, "looking for locks a killed git left in %s: %v", wd, err)
	}
}

// tidyIdle is how often a coder that may not claim tidies.
const tidyIdle = 30 * time.Second

// mayClaim reports whether the board, as read, has a task this coder may
// claim, by the rules the claim checks: a coder whose work awaits review
// takes no other task, one whose work came back takes that back first, and
// no task is added to a board at its in-flight limit. A coder that waits
// for its review does not try a claim at every move of the board only to
// be refused, which with many coders cost the reviewer they wait on its
// processor. awaited is the coder's task whose review it waits for, when
// that is why it may not claim.
func (s *sup) mayClaim(st *contracts.State) (may bool, awaited *contracts.Task) {
	now := s.Now()
	inFlight := 0
	var mine *contracts.Task
	for _, t := range st.Tasks {
		if t.Status.InFlight() {
			inFlight++
		}
		if t.AssignedTo == s.ID && t.Status.Active() && t.Status != contracts.Claimed {
			mine = t
		}
	}
	if mine != nil && s.awaits(mine) {
		return false, mine
	}
	limit := st.Config.InFlightLimit()
	for _, t := range st.Tasks {
		// A lease is taken over only once it is over by every clock
		// within the skew bound, as the claim judges it.
		if !contracts.Claimable(t.Summary(), st.StatusOf) && !(t.Status == contracts.Claimed && contracts.LeaseOver(t.LeaseExpires, now.Add(-ops.MaxClockSkew))) {
			continue
		}
		if mine != nil && t != mine || !t.Status.InFlight() && inFlight >= limit {
			continue
		}
		return true, nil
	}
	return false, nil
}

// awaits reports whether t is this coder's work that keeps it from
// claiming another task: submitted and not yet merged, or stopped; one
// rejected it takes back.
func (s *sup) awaits(t *contracts.Task) bool {
	return t.AssignedTo == s.ID && t.Status.Active() && t.Status != contracts.Claimed && t.Status != contracts.Rejected
}

func (s *sup) nextReviewer(ctx context.Context, st *contracts.State) (*work, bool, error) {
	s.startMerge(ctx, st)
	// After a review checkout's setup failed, no review is taken (nor the
	// one given back taken again) until the wait is over.
	if err := s.setupHeld(); err != nil {
		return nil, false, err
	}
	for _, t := range st.Tasks {
		if t.Status == contracts.ReadyForReview && t.ReviewingBy == s.ID {
			// A review resumed is checked first, as one to be taken is
			// (screenReviews): the integration branch may have moved
			// since it was taken.
			if back, _ := s.sendBack(ctx, t.ID, t.AssignedTo); back {
				return nil, true, nil
			}
			return s.resume(ctx, st, t, t.ReviewLeaseExpires)
		}
	}
	now := s.Now()
	any := false
	for _, t := range st.Tasks {
		if t.Status == contracts.ReadyForReview && t.AssignedTo != s.ID &&
			(t.ReviewingBy == "" || contracts.LeaseOver(t.ReviewLeaseExpires, now.Add(-ops.MaxClockSkew))) {
			any = true
			break
		}
	}
	if !any {
		return nil, false, nil
	}
	// No session is spent on a task that no longer merges.
	if s.screenReviews(ctx, st) {
		return nil, true, nil
	}
	var r *ops.ReviewResult
	err := s.do(func() (err error) { r, err = s.Board.Review(ctx, ops.ReviewRequest{}); return })
	if wait, ok := s.reviewSetupFailed(ctx, err); ok {
		return nil, false, wait
	}
	if err != nil {
		if s.holding(err) {
			return nil, false, nil // said once, by the hold
		}
		if waitable(err) {
			s.waiting("no review to take: " + err.Error())
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("review: %w", err)
	}
	s.eventf(EventReviewing, r.ID, "reviewing %s (author %s)", r.ID, r.Author)
	return s.reload(ctx, r.ID)
}

// resume hands the agent work this supervisor already holds, after a
// restart or an agent that exited 42. A lease that is due (ended, or past
// half its term, as git liza heartbeat decides) is renewed first: a claim
// whose lease ended could be taken over by another coder while the agent
// works on it.
func (s *sup) resume(ctx context.Context, st *contracts.State, t *contracts.Task, expires string) (*work, bool, error) {
	term := time.Duration(st.Config.LeaseDuration) * time.Second
	if !cas.LeaseDue(expires, s.Now(), term) {
		return &work{task: t}, false, nil
	}
	if err := s.do(func() error { _, err := s.Board.Heartbeat(ctx, ops.Call{}); return err }); err != nil {
		return nil, false, fmt.Errorf("renew the lease on %s: %w", t.ID, err)
	}
	cur, _, err := s.read()
	if err != nil {
		return nil, false, err
	}
	if t = cur.Task(t.ID); t == nil || !s.holds(t) {
		return nil, false, nil
	}
	s.eventf(EventResumed, t.ID, "renewed the lease on %s before resuming it", t.ID)
	return &work{task: t}, false, nil
}

// holds reports whether this supervisor's agent holds t: a coder's task
// CLAIMED, a reviewer's under its review.
func (s *sup) holds(t *contracts.Task) bool {
	switch s.Role {
	case contracts.RoleCoder:
		return t.Status == contracts.Claimed && t.AssignedTo == s.ID
	case contracts.RoleReviewer:
		return t.Status == contracts.ReadyForReview && t.ReviewingBy == s.ID
	}
	return false
}

func (s *sup) nextPlanner(ctx context.Context, st *contracts.State) (*work, bool, error) {
	if contracts.GoalComplete(st) {
		if err := s.do(func() error { _, err := s.Board.Complete(ctx, ops.Call{}); return err }); err != nil {
			return nil, false, fmt.Errorf("complete the goal: %w", err)
		}
		s.eventf(EventCompleted, "", "every task is terminal: goal %s and sprint %s completed", st.Goal.ID, st.Sprint.ID)
		return nil, true, nil
	}
	p := contracts.Planning(st)
	if p.Trigger == "" || p.Fingerprint() == s.seen {
		return nil, false, nil
	}
	s.eventf(EventWake, "", "wake: %s (%s)", p.Trigger, strings.Join(p.Items, ", "))
	return &work{trigger: &p}, false, nil
}

// reload reads a task the supervisor just claimed: the task alone, from
// the state its claim made or a later one. The board is read again when
// the loop comes round, and each read costs what changed since the last:
// a read here only for the task made every coder's reads cost one more.
func (s *sup) reload(ctx context.Context, id string) (*work, bool, error) {
	t, err := s.claimed(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if t == nil {
		return nil, false, fmt.Errorf("task %s is not on the board after its claim", id)
	}
	return &work{task: t}, false, nil
}

// claimed reads task id at the tip, or nil. Only a state this repository
// wrote or verified is read in part; any other is read whole and
// validated, and in remote mode the board is synced first.
func (s *sup) claimed(ctx context.Context, id string) (*contracts.Task, error) {
	tip, _, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		return nil, err
	}
	if s.Remote || !(&cas.Store{Repo: s.Repo}).KnownGood(tip) {
		st, _, err := s.board(ctx)
		if err != nil {
			return nil, err
		}
		return st.Task(id), nil
	}
	snap, err := cas.ReadSnapshot(s.Repo, tip)
	if err != nil {
		return nil, err
	}
	return snap.Task(id)
}

// live reports whether an agent entry holds a lease that has not ended:
// its supervisor's, or the lease on the work it holds.
func live(a *contracts.Agent, now time.Time) bool {
	return a != nil && (!contracts.LeaseOver(a.SupervisorLease, now) || !contracts.LeaseOver(a.LeaseExpires, now))
}
