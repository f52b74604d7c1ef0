package contracts

import (
	"slices"
	"strings"
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
