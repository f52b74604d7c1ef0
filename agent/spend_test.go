package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/liza-dev/git-liza/transcript"
)

// codex's stream names no model: the one its command line or its
// config.toml sets prices its tokens.
func TestLaunchModel(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("# mine\nmodel = \"gpt-5-codex\" # pinned\n[model_providers.x]\nmodel = \"no\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=/nowhere", "CODEX_HOME=" + home}
	for _, tc := range []struct {
		format string
		argv   []string
		want   string
	}{
		{transcript.FormatCodex, []string{"codex", "exec", "--json", "-m", "o4-mini", "p"}, "o4-mini"},
		{transcript.FormatCodex, []string{"codex", "exec", "--model=gpt-5-mini", "p"}, "gpt-5-mini"},
		{transcript.FormatCodex, []string{"codex", "exec", "-c", `model="gpt-4.1"`, "p"}, "gpt-4.1"},
		{transcript.FormatCodex, []string{"codex", "exec", "p"}, "gpt-5-codex"},
		{transcript.FormatClaude, []string{"claude", "-p", "--model", "x"}, ""},
	} {
		if got := launchModel(tc.format, tc.argv, env); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.argv, got, tc.want)
		}
	}
	if got := launchModel(transcript.FormatCodex, []string{"codex"}, []string{"HOME=/nowhere"}); got != "" {
		t.Errorf("no config: %q", got)
	}
}
