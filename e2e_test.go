package main

import (
	"os"
	"testing"
)

// e2eEnv is the environment variable that turns on the slow end-to-end
// runs: the real agent CLIs, teams started with git liza run and killed,
// the scripts marked [e2e]. .ci/run sets it; a plain go test ./... skips
// them, each with a line saying how to run it.
const e2eEnv = "LIZA_E2E"

// e2eOnly skips t unless LIZA_E2E=1.
func e2eOnly(t *testing.T) {
	t.Helper()
	if os.Getenv(e2eEnv) != "1" {
		t.Skipf("an end-to-end run: LIZA_E2E=1 go test -run '^%s$' . (.ci/run sets LIZA_E2E=1)", t.Name())
	}
}
