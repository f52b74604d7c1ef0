package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/transcript"
)

// lockedBuffer is a buffer one goroutine writes while another reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLogsFollow: git liza logs -f shows a session's steps as its log is
// written, each once, and ends with the session's end record.
func TestLogsFollow(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	logDir := filepath.Join(dir, ".git", "liza", "logs", "sessions", "coder-1")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(logDir, "20260117T100000-001-a.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	write := func(r transcript.Record) {
		t.Helper()
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	write(transcript.Record{T: at, Header: &transcript.Header{Agent: "coder-1", Task: "a", Label: "a", Session: 1, CLI: "sh", Format: transcript.FormatText, Started: at}})
	write(transcript.Record{T: at, Out: "first line"})

	var out, errOut lockedBuffer
	e := &Env{Dir: dir, Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	code := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { code <- e.Run(ctx, []string{"git-liza", "logs", "-f", "coder-1"}) }()

	// waitFor waits until the output holds s, failing if logs ends first.
	waitFor := func(s string) {
		t.Helper()
		for !strings.Contains(out.String(), s) {
			select {
			case c := <-code:
				t.Fatalf("logs -f ended (%d) before showing %q:\n%s%s", c, s, out.String(), errOut.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	waitFor("output first line")
	write(transcript.Record{T: at.Add(time.Second), Out: "second line"})
	waitFor("output second line")
	select {
	case c := <-code:
		t.Fatalf("logs -f ended (%d) before the session did:\n%s", c, out.String())
	default:
	}
	write(transcript.Record{T: at.Add(2 * time.Second), End: &transcript.End{Outcome: "done", Seconds: 2}})
	if c := <-code; c != 0 {
		t.Fatalf("logs -f = %d: %s", c, errOut.String())
	}
	got := out.String()
	want := "session 1: coder-1 on a, sh session 1, started " + at.Local().Format("2006-01-02 15:04:05") +
		" (log .git/liza/logs/sessions/coder-1/20260117T100000-001-a.jsonl)\n"
	for i, line := range []string{"output first line", "output second line", "end    done"} {
		want += at.Add(time.Duration(i)*time.Second).Local().Format("15:04:05") + " " + line + "\n"
	}
	if got != want {
		t.Errorf("logs -f printed\n%s\nwant\n%s", got, want)
	}
}
