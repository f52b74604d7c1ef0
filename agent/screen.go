package agent

import (
	"context"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// screenReviews is the check a reviewer supervisor runs before it spends
// a session (issue 28): every task it could take for review is merged,
// with git merge-tree, onto the integration tip and the tasks approved
// ahead of it, and one that does not merge goes back to its coder at once
// as an integration fix. A task that merged is checked again only once
// something it was checked against moved (screened remembers what); one
// sent back is checked whenever it awaits review again, even at the same
// commit onto the same tip (a fix that found nothing to merge). It
// reports whether a task was sent back: the board then looks different.
func (s *sup) screenReviews(ctx context.Context, st *contracts.State) bool {
	queue := mergeQueueKey(st)
	if s.screened == nil {
		s.screened = map[string]string{}
	}
	sent := false
	now := s.Now()
	for _, t := range st.Tasks {
		if t.Status != contracts.ReadyForReview || t.AssignedTo == s.ID ||
			t.ReviewingBy != "" && t.ReviewingBy != s.ID && !contracts.LeaseOver(t.ReviewLeaseExpires, now.Add(-ops.MaxClockSkew)) {
			continue
		}
		key := t.ReviewCommit + " " + queue
		if s.screened[t.ID] == key {
			continue
		}
		switch back, ok := s.sendBack(ctx, t.ID, t.AssignedTo); {
		case back:
			sent = true
		case ok:
			s.screened[t.ID] = key
		}
	}
	return sent
}

// sendBack checks that task id, by author, merges, and reports whether it
// went back to its coder, and whether the check was made.
func (s *sup) sendBack(ctx context.Context, id, author string) (back, ok bool) {
	var r *ops.CheckMergesResult
	err := s.do(func() (err error) { r, err = s.Board.CheckMerges(ctx, ops.CheckMergesRequest{Task: id}); return })
	if err != nil {
		// The check only saves sessions: one that fails leaves the task
		// to the review, and is logged once per failure (a hold once for
		// all: hold.go).
		if !s.holding(err) {
			s.waiting("checking that " + id + " merges failed: " + err.Error())
		}
		return false, false
	}
	if r.Conflict == "" {
		return false, true
	}
	if r.Author != "" {
		author = r.Author
	}
	s.eventf(EventIntegrationFailed, id, "%s does not merge: %s; sent back to %s", id, r.Conflict, contracts.Printable(author))
	return true, true
}

// mergeQueueKey names what a merge check merges onto, as the board records
// it: the integration tip and the approved tasks with their commits.
func mergeQueueKey(st *contracts.State) string {
	var b strings.Builder
	b.WriteString(st.Config.IntegrationTip)
	for _, t := range st.Tasks {
		if t.Status == contracts.Approved {
			b.WriteString(" " + t.ID + "@" + t.ReviewCommit)
		}
	}
	return b.String()
}

// fixWaits reports whether this coder's next claim, the integration fix
// of its own task sent back for a conflict with a task approved ahead of
// it, must wait for that task to be merged: the fix starts from the
// integration tip, which lacks the task ahead until then, so a session
// would find nothing to merge and submit the same commit, to be sent back
// again (issue 28: a team of eight coders on three shared files spent
// five fix sessions per task that way). Its sleep wakes when either task
// moves.
func (s *sup) fixWaits(st *contracts.State) bool {
	for _, t := range st.Tasks {
		if t.AssignedTo != s.ID || t.Status != contracts.IntegrationFailed {
			continue
		}
		ahead := ops.ConflictAhead(t)
		if a := st.Task(ahead); ahead == "" || a == nil || a.Status != contracts.Approved {
			continue
		}
		s.waiting(t.ID + " waits for " + ahead + ", approved ahead of it, to merge before its integration fix")
		s.awaited = ""
		s.waitOn = []string{cas.EntityFile(cas.TasksDir, ahead), cas.EntityFile(cas.ArchiveDir, ahead),
			cas.EntityFile(cas.TasksDir, t.ID), cas.EntityFile(cas.AgentsDir, s.ID)}
		return true
	}
	return false
}
