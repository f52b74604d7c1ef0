package transcript

import (
	"bytes"
	"strings"
	"testing"
)

// A -- COMMAND agent (text format) reports what it spent with a JSON line
// {"liza_usage": {...}} on its output: the last such line is the
// session's usage; its cost is reported when it gives one. A line that is
// not a valid report stays a line of output.
func TestUsageLine(t *testing.T) {
	var log bytes.Buffer
	w := NewWriter(&log, Header{Agent: "coder-1", Task: "a"}, FormatText)
	w.Stdout().Write([]byte(`working
{"liza_usage":{"model":"m1","input_tokens":10,"output_tokens":2}}
{"liza_usage":{"model":"m1","input_tokens":100,"output_tokens":20,"cache_read_tokens":3,"cache_write_tokens":4,"cost_usd":0.5,"cost_source":"priced"}}
{"liza_usage":{"input_tokens":-5}}
{"liza_usage":{"input_tokens":1e300}}
{"liza_usage":"lots"}
done
`))
	w.End(End{Outcome: "done"})
	sum := w.Summary()
	want := Usage{Model: "m1", InputTokens: 100, OutputTokens: 20, CacheReadTokens: 3, CacheWriteTokens: 4, CostUSD: 0.5, CostSource: "reported"}
	if sum.Usage != want {
		t.Errorf("usage %+v, want %+v", sum.Usage, want)
	}
	var lines []string
	for _, st := range w.Steps() {
		lines = append(lines, Render(st, 100))
	}
	got := strings.Join(lines, "\n")
	for _, l := range []string{"usage  10 in, 2 out", "usage  100 in, 20 out, cache 3 read, 4 written, $0.5000",
		`output {"liza_usage":{"input_tokens":-5}}`, `output {"liza_usage":"lots"}`} {
		if !strings.Contains(got, l) {
			t.Errorf("steps lack %q:\n%s", l, got)
		}
	}

	// Without a cost the board prices it: no source.
	p := NewParser(FormatText)
	steps := p.Record(Record{Out: `{"liza_usage":{"model":"gpt-5","input_tokens":7}}`})
	if len(steps) != 1 || steps[0].Usage == nil || steps[0].Usage.CostSource != "" || steps[0].Usage.InputTokens != 7 {
		t.Errorf("steps %+v", steps)
	}
	// Only the text format reads it: in a CLI's stream it is output.
	steps = NewParser(FormatClaude).Record(Record{JSON: []byte(`{"liza_usage":{"input_tokens":7}}`)})
	for _, st := range steps {
		if st.Usage != nil {
			t.Errorf("a claude stream took a liza_usage line: %+v", st)
		}
	}
}

// codex and gemini count cached tokens inside their input tokens; the
// usage counts them apart.
func TestCachedInputApart(t *testing.T) {
	p := NewParser(FormatCodex)
	p.Record(Record{JSON: []byte(`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":5}}`)})
	steps := p.Record(Record{JSON: []byte(`{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":150,"output_tokens":7}}`)})
	if u := steps[0].Usage; u.InputTokens != 110 || u.CacheReadTokens != 190 || u.OutputTokens != 12 {
		t.Errorf("codex usage %+v", u)
	}
	g := NewParser(FormatGemini)
	steps = g.Record(Record{JSON: []byte(`{"type":"result","status":"success","stats":{"input_tokens":500,"output_tokens":50,"cached":120,"models":{"gemini-2.5-flash":{"total_tokens":30},"gemini-2.5-pro":{"total_tokens":520}}}}`)})
	u := steps[len(steps)-1].Usage
	if u == nil || u.InputTokens != 380 || u.CacheReadTokens != 120 || u.Model != "gemini-2.5-pro" {
		t.Errorf("gemini usage %+v", u)
	}
}
