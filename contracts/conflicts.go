package contracts

import (
	"slices"
	"strings"
	"time"
)

// The merge queue and the conflicts found before review (issue 28).

// ConflictChecked is the history extra key an integration failure found
// before review carries: where it was found, CheckedSubmit or
// CheckedReview. A failure of the merge itself has none.
const (
	ConflictChecked = "checked"
	CheckedSubmit   = "submit"
	CheckedReview   = "review"
)

// MergeQueue orders APPROVED tasks the way the merge lane takes them:
// lowest priority number first, then the earliest approval, then the id.
func MergeQueue(approved []*Task) []*Task {
	out := slices.Clone(approved)
	at := make(map[*Task]time.Time, len(out))
	for _, t := range out {
		if e := latestEvent(t, "approved"); e != nil {
			at[t], _ = ParseTime(e.Time)
		}
	}
	slices.SortStableFunc(out, func(a, b *Task) int {
		if a.Priority != b.Priority {
			return a.Priority - b.Priority
		}
		if c := at[a].Compare(at[b]); c != 0 {
			return c
		}
		return compareNatural(a.ID, b.ID)
	})
	return out
}

// EarlyConflicts counts, over the board's history (live and archived
// tasks), the conflicts found before a reviewer spent a session on them
// (caught: a submission or a task awaiting review sent back as an
// integration fix) and the review sessions spent on work that then did
// not merge (spent: an approval followed by a merge conflict at merge
// time). The goal is spent == 0.
func EarlyConflicts(st *State) (caught, spent int) {
	for _, t := range append(slices.Clone(st.Tasks), st.Archive...) {
		if t == nil {
			continue
		}
		for _, e := range t.History {
			if e == nil || e.Event != "integration_failed" {
				continue
			}
			switch {
			case e.From == string(ReadyForReview):
				caught++
			case e.From == string(Approved) && strings.HasPrefix(e.Reason, "merge conflict"):
				spent++
			}
		}
	}
	return caught, spent
}
