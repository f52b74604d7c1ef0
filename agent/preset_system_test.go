package agent

import (
	"slices"
	"testing"
)

// Claude Code's own sandbox is bubblewrap and socat on Linux, and Seatbelt
// (sandbox-exec, part of the system) on macOS: only Linux needs the two
// programs installed.
func TestPresetNeedsBySystem(t *testing.T) {
	claude := Presets["claude"]
	if got := claude.needsOn("linux"); !slices.Equal(got, []string{"bwrap", "socat"}) {
		t.Fatalf("claude on Linux needs %q", got)
	}
	if got := claude.needsOn("darwin"); len(got) != 0 {
		t.Fatalf("claude on macOS needs %q, want nothing (Seatbelt is built in)", got)
	}
}
