package commands

import (
	"os"
	"testing"
)

// TestWatchOutputEPIPE: a write that finds nobody reading says the output
// is closed, once, and the process does not die of SIGPIPE.
func TestWatchOutputEPIPE(t *testing.T) {
	keepSIGPIPE()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.Close()
	n := 0
	// Not the *os.File itself: only the failed write can say it.
	out, stop := watchOutput(struct{ *os.File }{w}, func() { n++ })
	defer stop()
	for range 2 {
		if _, err := out.Write([]byte("line\n")); err == nil {
			t.Fatal("a write to a pipe nobody reads succeeded")
		}
	}
	if n != 1 {
		t.Fatalf("closed called %d times, want 1", n)
	}
}
