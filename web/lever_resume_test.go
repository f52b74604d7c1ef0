package web

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The web board's resume lifts the seed's .liza/PAUSE file as the command
// line's resume does, and says so: it must not answer that there was
// nothing to resume after it removed the file that halted this checkout.
func TestResumeLeverLiftsPauseFile(t *testing.T) {
	b := newBoard(t, Options{})
	if err := os.MkdirAll(filepath.Join(b.root, ".liza"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.root, ".liza", "PAUSE"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, body := post(t, b, "/lever/resume", url.Values{}, map[string]string{"X-Liza-Token": testToken, "Accept": "text/plain"})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("resume: %d %s", res.StatusCode, body)
	}
	if _, err := os.Stat(filepath.Join(b.root, ".liza", "PAUSE")); !os.IsNotExist(err) {
		t.Fatalf(".liza/PAUSE is still there (%v)", err)
	}
	t.Logf("web resume answered: %q", strings.TrimSpace(body))
	if strings.Contains(body, "nothing to resume") {
		t.Errorf("web resume removed .liza/PAUSE (the team was halted here) but answered %q; the command line says `resumed (was RUNNING)` and `removed .liza/PAUSE`", strings.TrimSpace(body))
	}
}
