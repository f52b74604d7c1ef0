package hooks

import (
	"strings"
	"testing"
)

// git gives a hook the null id in the repository's format: 40 zeros in a
// SHA-1 repository, 64 in a SHA-256 one. Both read as zeroID, so that a
// creation or a deletion is told apart in either.
func TestReadUpdatesNullIDs(t *testing.T) {
	id := strings.Repeat("ab", 32)
	for _, null := range []string{strings.Repeat("0", 40), strings.Repeat("0", 64)} {
		got, err := readUpdates(strings.NewReader(null + " " + id + " refs/liza/state\n" + id + " " + null + " refs/liza/state\n"))
		if err != nil || len(got) != 2 {
			t.Fatalf("readUpdates: %v, %v", got, err)
		}
		if got[0].old != zeroID || got[0].new != id || got[1].old != id || got[1].new != zeroID {
			t.Errorf("%d zeros: %+v", len(null), got)
		}
	}
}
