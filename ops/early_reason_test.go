package ops

import "testing"

// The reason a coder reads names the files as a terminal can show them:
// a file name is its author's to choose.
func TestConflictReasonEscaped(t *testing.T) {
	c := &mergeCheck{conflicts: []string{"x.go", "a\nb\x1b]0;owned\x07.go"}, more: 3}
	want := `merge conflict in x.go, a\nb\x1b]0;owned\x07.go and 3 more files with main`
	if got := c.reason("main"); got != want {
		t.Fatalf("reason %q\nwant   %q", got, want)
	}
	c = &mergeCheck{more: 2, with: "task-7"}
	if got := c.reason("main"); got != "merge conflict in 2 files with task task-7, approved ahead of it" {
		t.Fatalf("reason %q", got)
	}
}
