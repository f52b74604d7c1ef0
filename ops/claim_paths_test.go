package ops

import (
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// A candidate's declared paths against the files a branch in flight
// changes: directories hold what is below them, globs what they match
// (and what lies below a directory they match), "**" any depth.
func TestPathsHold(t *testing.T) {
	for _, c := range []struct {
		paths   contracts.StringList
		changed []string
		want    string // the file held, "" for none
	}{
		{contracts.StringList{"src/*.go"}, []string{"docs/a.md", "src/a.go"}, "src/a.go"},
		{contracts.StringList{"src/*.go"}, []string{"src/sub/a.go"}, ""},
		{contracts.StringList{"src/"}, []string{"src/sub/a.go"}, "src/sub/a.go"},
		{contracts.StringList{"src"}, []string{"srcs/a.go"}, ""},
		{contracts.StringList{"src/ret"}, []string{"src/retry.go"}, ""},
		{contracts.StringList{"docs/**"}, []string{"docs/x/y.md"}, "docs/x/y.md"},
		{contracts.StringList{"./lib/"}, []string{"lib/a.c"}, "lib/a.c"},
		{contracts.StringList{"a.txt", "b/"}, []string{"c.txt", "b/z"}, "b/z"},
		{nil, []string{"src/a.go"}, ""}, // declares nothing: not known to collide
	} {
		_, file, ok := pathsHold(c.paths, branchChanges{files: c.changed, complete: true})
		if ok != (c.want != "") || file != c.want {
			t.Errorf("%q over %q: held %q (%v), want %q", c.paths, c.changed, file, ok, c.want)
		}
	}
	// A branch that changes more files than were read may change any.
	if _, _, ok := pathsHold(contracts.StringList{"x/"}, branchChanges{files: []string{"a"}}); !ok {
		t.Error("an incomplete list of changes was taken as clear of x/")
	}
}
