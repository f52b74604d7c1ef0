package transcript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeSession writes a session log of agent's session n at dir with the
// records after the header; it returns its path.
func writeSession(t testing.TB, dir, agent string, n int, started time.Time, recs ...Record) string {
	t.Helper()
	path := filepath.Join(dir, agent, started.Format("20060102T150405")+"-"+strings.Repeat("0", 2)+string(rune('0'+n))+"-t.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	h := Header{Agent: agent, Task: "t", Label: "t", Session: n, CLI: "claude", Format: FormatClaude, Started: started}
	var b strings.Builder
	for _, r := range append([]Record{{T: started, Header: &h}}, recs...) {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestList: sessions come oldest first by their headers' start, across
// agents, numbered from 1; files that are no session log are passed over;
// LoadAll reads each one's end and steps.
func TestList(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	tool := json.RawMessage(`{"type":"assistant","message":{"content":[{"id":"x","input":{"command":"ls"},"name":"Bash","type":"tool_use"}],"usage":{"input_tokens":7,"output_tokens":3}}}`)
	late := writeSession(t, dir, "coder-1", 2, at.Add(time.Minute), Record{T: at.Add(time.Minute), JSON: tool})
	early := writeSession(t, dir, "code-reviewer-1", 1, at, Record{T: at, JSON: tool}, Record{T: at.Add(5 * time.Second), End: &End{Outcome: "done", Seconds: 5}})
	for name, body := range map[string]string{"coder-1/old.log": "plain text\n", "coder-1/x.jsonl": "not json\n", "coder-1/empty.jsonl": ""} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Path != early || got[1].Path != late || got[0].N != 1 || got[1].N != 2 {
		t.Fatalf("List = %+v, want %s then %s", got, early, late)
	}
	if err := LoadAll(got); err != nil {
		t.Fatal(err)
	}
	if e := got[0].End; e == nil || e.Outcome != "done" || got[0].Summary.Steps != 2 {
		t.Errorf("session 1 loaded as end %+v, summary %+v", e, got[0].Summary)
	}
	if got[1].End != nil || got[1].Last != at.Add(time.Minute) {
		t.Errorf("session 2 (open) loaded as end %+v, last %s", got[1].End, got[1].Last)
	}
	if none, err := List(filepath.Join(dir, "nothing")); err != nil || none != nil {
		t.Errorf("List of a missing directory = %v, %v", none, err)
	}
}

// BenchmarkLoad reads a session log of 200 records of 2 KB (a tool call
// and its result, 100 times), as git liza logs does for each session it
// lists.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	at := time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC)
	var recs []Record
	for i := range 100 {
		id := "tu" + string(rune('a'+i%26))
		recs = append(recs,
			Record{T: at, JSON: json.RawMessage(`{"type":"assistant","message":{"content":[{"id":"` + id + `","input":{"command":"cat f"},"name":"Bash","type":"tool_use"}],"usage":{"input_tokens":100,"output_tokens":10}}}`)},
			Record{T: at, JSON: json.RawMessage(`{"type":"user","message":{"content":[{"tool_use_id":"` + id + `","type":"tool_result","content":"` + strings.Repeat("x", 2000) + `","is_error":false}]}}`)})
	}
	path := writeSession(b, dir, "coder-1", 1, at, recs...)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	for b.Loop() {
		s := Session{Path: path}
		if err := s.Load(); err != nil || s.Summary.Steps == 0 {
			b.Fatal(err, s.Summary)
		}
	}
}
