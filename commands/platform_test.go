package commands

import (
	"errors"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// The commands that run supervisors are refused on Windows, with one line
// that says why and what to use instead (exit 5: the environment), and
// run elsewhere.
func TestSupervisorsRefusedOnWindows(t *testing.T) {
	err := supervisorsRefused("windows", "run")
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeMissingDep {
		t.Fatalf("on Windows: %v, want an exit-5 error", err)
	}
	if want := "run: not supported on Windows (needs POSIX process groups); use WSL"; ce.Msg != want {
		t.Fatalf("on Windows: %q, want %q", ce.Msg, want)
	}
	for _, goos := range []string{"linux", "darwin", "freebsd"} {
		if err := supervisorsRefused(goos, "run"); err != nil {
			t.Errorf("on %s: %v", goos, err)
		}
	}
}
