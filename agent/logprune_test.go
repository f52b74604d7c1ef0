package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The session logs and their prompts are kept within a size: the oldest
// sessions go first, each with its prompt; a log written in the last hour
// (a session that may still run) is kept whatever its age; 0 keeps all.
func TestPruneSessionLogs(t *testing.T) {
	now := time.Now()
	logs, prompts := t.TempDir(), t.TempDir()
	write := func(dir, agent, name string, size int, age time.Duration) string {
		p := filepath.Join(dir, agent, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o644); err != nil {
			t.Fatal(err)
		}
		at := now.Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Three sessions of 1,000 bytes (900 of log, 100 of prompt) two days
	// old, one an hour old that is still written (the oldest by name).
	old1 := write(logs, "coder-1", "20260101T000000-001-a.jsonl", 900, 48*time.Hour)
	p1 := write(prompts, "coder-1", "20260101T000000-001-a.md", 100, 48*time.Hour)
	old2 := write(logs, "coder-2", "20260101T000100-001-b.jsonl", 900, 48*time.Hour)
	p2 := write(prompts, "coder-2", "20260101T000100-001-b.md", 100, 48*time.Hour)
	newest := write(logs, "coder-1", "20260101T000200-002-a.jsonl", 900, 48*time.Hour)
	running := write(logs, "code-reviewer-1", "20251231T000000-001-a.jsonl", 1000, time.Minute)
	other := write(logs, "coder-1", "notes.txt", 5000, 48*time.Hour)

	if n, _ := PruneSessionLogs(logs, prompts, 0, now); n != 0 {
		t.Fatalf("max 0 removed %d sessions", n)
	}
	if n, _ := PruneSessionLogs(logs, prompts, 4000, now); n != 0 {
		t.Fatalf("within the bound, %d sessions removed", n)
	}
	n, freed := PruneSessionLogs(logs, prompts, 2000, now)
	if n != 2 || freed != 2000 {
		t.Errorf("removed %d sessions, %d bytes; want 2, 2000", n, freed)
	}
	for _, p := range []string{old1, p1, old2, p2} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s kept, want it removed (oldest first, with its prompt)", p)
		}
	}
	for _, p := range []string{newest, running, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed, want it kept: %v", p, err)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "500m": 500 << 20, "4g": 4 << 30, " 2K ": 2 << 10} {
		if got, ok := parseSize(in); !ok || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-1", "lots", "1t", "99999999999g"} {
		if _, ok := parseSize(in); ok {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}
