package transcript

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An agent that floods its output (short lines, each a record some 27
// times its size) filled the disk through its session log: the log keeps
// MaxLog of it, the usage printed past it still counts, and the End says
// what was not kept.
func TestSessionLogCapped(t *testing.T) {
	defer func(n int64) { MaxLog = n }(MaxLog)
	MaxLog = 1 << 20
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := os.Create(path)
	defer f.Close()
	w := NewWriter(f, Header{Agent: "coder-1", Task: "a", Label: "a", Session: 1, CLI: "sh"}, FormatText)
	chunk := bytes.Repeat([]byte("\x01\n"), 32<<10)
	for i := 0; i < 8; i++ {
		w.Stdout().Write(chunk)
	}
	fmt.Fprintln(w.Stdout(), `{"liza_usage":{"input_tokens":1200,"output_tokens":300}}`)
	w.End(End{Outcome: "done"})
	fi, _ := f.Stat()
	if fi.Size() > 2<<20 {
		t.Fatalf("log %d bytes past the cap", fi.Size())
	}
	if u := w.Spent(); u.InputTokens != 1200 {
		t.Fatalf("usage past the cap not read: %+v", u)
	}
	_, recs, err := ReadFile(path)
	if err != nil || recs[len(recs)-1].End == nil || !strings.Contains(recs[len(recs)-1].End.Detail, "not kept") {
		t.Fatalf("end: %v %+v", err, recs[len(recs)-1])
	}
}
