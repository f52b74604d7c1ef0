package ops

import (
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// A field's change reads on one line, with an agent's escape sequences
// shown, never sent; a long text marks only what changed.
func TestFieldLine(t *testing.T) {
	long := "the retry loop backs off exponentially and gives up after five attempts"
	for _, c := range []struct {
		f    contracts.FieldChange
		want string
	}{
		{contracts.FieldChange{Field: "status", Old: "CLAIMED", New: "READY_FOR_REVIEW"}, "status: CLAIMED -> READY_FOR_REVIEW"},
		{contracts.FieldChange{Field: "review_commit", New: "1a2b", Added: true}, "+ review_commit: 1a2b"},
		{contracts.FieldChange{Field: "blocked_reason", Old: "x\x1b[2J", Removed: true}, `- blocked_reason: x\x1b[2J`},
		{contracts.FieldChange{Field: "description", Old: long, New: long + " or ten"}, "description: " + long + "{+ or ten+}"},
	} {
		if got := FieldLine(c.f); got != c.want {
			t.Errorf("FieldLine(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
	pieces := WordDiff("a b c", "a x c")
	var del, ins string
	for _, p := range pieces {
		switch p.Kind {
		case Deleted:
			del += p.Text
		case Inserted:
			ins += p.Text
		}
	}
	if del != "b" || ins != "x" {
		t.Errorf("WordDiff: deleted %q, inserted %q", del, ins)
	}
}
