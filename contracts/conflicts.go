package contracts

// The conflicts found before review (issue 28).

// ConflictChecked is the history extra key an integration failure found
// before review carries: where it was found, CheckedSubmit or
// CheckedReview. A failure of the merge itself has none.
const (
	ConflictChecked = "checked"
	CheckedSubmit   = "submit"
	CheckedReview   = "review"
)
