package refstore

import (
	"slices"
	"strings"
	"testing"
)

// TestSigningEnv: the signing configuration goes after the pairs the
// environment already holds, which stay as they were, and git-liza's own
// configuration reader sees it.
func TestSigningEnv(t *testing.T) {
	env := SigningEnv([]string{"HOME=/h", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_VALUE_0=cat"}, "/keys/coder-1")
	want := []string{"HOME=/h", "GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_VALUE_0=cat",
		"GIT_CONFIG_KEY_1=user.signingKey", "GIT_CONFIG_VALUE_1=/keys/coder-1",
		"GIT_CONFIG_KEY_2=gpg.format", "GIT_CONFIG_VALUE_2=ssh",
		"GIT_CONFIG_KEY_3=commit.gpgSign", "GIT_CONFIG_VALUE_3=true", "GIT_CONFIG_COUNT=4"}
	if !slices.Equal(env, want) {
		t.Fatalf("SigningEnv = %q, want %q", env, want)
	}
	t.Setenv("GIT_CONFIG_PARAMETERS", "'gpg.format'='openpgp'")
	for _, kv := range env[1:] {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	got := configParameters()
	if got["user.signingkey"] != "/keys/coder-1" || got["commit.gpgsign"] != "true" || got["gpg.format"] != "openpgp" {
		t.Fatalf("configParameters = %q: want the key from GIT_CONFIG_COUNT and -c winning over it", got)
	}
}
