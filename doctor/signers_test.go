package doctor

import (
	"strings"
	"testing"
)

// TestSignerProblems: what an allowed-signers file lets one key do.
func TestSignerProblems(t *testing.T) {
	const k1, k2 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOne", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITwo"
	for _, c := range []struct {
		name, file string
		want       []string // level: start of text, in order
	}{
		{"one key per agent", "coder-1 " + k1 + "\ncode-reviewer-1 namespaces=\"git\" " + k2 + "\n# a comment\n", nil},
		{"everyone", "* " + k1, []string{"warn: line 1: the pattern * lets one key sign as every agent it matches (human, planner-1", "fail: the key on line 1 signs as a coder and as a reviewer (*)"}},
		{"two coders, two lines", "coder-1 " + k1 + "\ncoder-2 " + k1, []string{"warn: the key on line 1, 2 signs as several agents (coder-1, coder-2)"}},
		{"a negation grants nothing", "coder-1,!coder-2 " + k1, nil},
		{"a certificate authority", "coder-1 cert-authority " + k1, []string{"warn: line 1 is a certificate authority"}},
	} {
		var got []string
		for _, p := range signerProblems(c.file) {
			got = append(got, p.level+": "+p.text)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], c.want[i]) {
				t.Errorf("%s: %q, want it to start %q", c.name, got[i], c.want[i])
			}
		}
	}
}
