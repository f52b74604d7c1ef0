package worktree

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A program's output past the bounds is cut in its middle: the head and
// the exact last LogTail bytes are kept, with a line saying how much went,
// however it was written (here in small writes, as a chatty test prints).
func TestCappedLog(t *testing.T) {
	var out bytes.Buffer
	c := NewCappedLog(&out)
	var all bytes.Buffer
	for i := 0; all.Len() < 3*LogHead; i++ {
		line := fmt.Sprintf("line %d\n", i)
		all.WriteString(line)
		if n, err := c.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if err := c.Finish(); err != nil {
		t.Fatal(err)
	}
	got, want := out.Bytes(), all.Bytes()
	if len(got) > LogHead+LogTail+100 {
		t.Fatalf("log of %d bytes, want at most %d", len(got), LogHead+LogTail+100)
	}
	if !bytes.Equal(got[:LogHead], want[:LogHead]) {
		t.Error("the head is not the output's first bytes")
	}
	if !bytes.HasSuffix(got, want[len(want)-LogTail:]) {
		t.Error("the log does not end with the output's last bytes")
	}
	cut := len(want) - LogHead - LogTail
	if mark := fmt.Sprintf("\n[git-liza: %d bytes of output cut here]\n", cut); !bytes.Contains(got, []byte(mark)) {
		t.Errorf("no mark %q", strings.TrimSpace(mark))
	}

	// Output within the bounds is written as it is.
	out.Reset()
	c = NewCappedLog(&out)
	c.Write([]byte("short\n"))
	c.Finish()
	if out.String() != "short\n" {
		t.Errorf("short output logged as %q", out.String())
	}
}

// PruneLogs keeps the newest logs that match, and nothing else is touched.
func TestPruneLogs(t *testing.T) {
	dir := t.TempDir()
	base := time.Now().Add(-time.Hour)
	for i := range 5 {
		p := filepath.Join(dir, fmt.Sprintf("integration-%c.log", 'e'-i))
		os.WriteFile(p, nil, 0o644)
		at := base.Add(time.Duration(i) * time.Minute)
		os.Chtimes(p, at, at)
	}
	os.WriteFile(filepath.Join(dir, "other.log"), nil, 0o644)
	os.Chtimes(filepath.Join(dir, "other.log"), base.Add(-time.Hour), base.Add(-time.Hour))
	PruneLogs(dir, "integration-*.log", 2)
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	if got := strings.Join(names, " "); got != "integration-a.log integration-b.log other.log" {
		t.Errorf("left %s, want the two newest and other.log", got)
	}
}
