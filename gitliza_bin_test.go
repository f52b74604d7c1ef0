package main_test

import (
	"os/exec"
	"testing"
)

// gitLizaBin is the git-liza the tests run: the test binary itself, which
// TestMain (testscript) put on PATH under that name, so that no test
// builds its own (a go build took 5 to 25 s of each of two tests).
func gitLizaBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("git-liza")
	if err != nil {
		t.Skip("git-liza is not on PATH (TestMain puts it there)")
	}
	return bin
}
