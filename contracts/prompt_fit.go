package contracts

import (
	"fmt"
	"strings"
)

// PromptContextMax bounds the session context of a prompt: what the board
// tells the agent after the contract's texts. The board holds text other
// agents wrote (a task file may hold 1 MiB of description, feedback,
// checkpoint or handoff, and the planner reads every pending note), and
// whatever is in the context is read, and paid for, at every turn of the
// session. A context over it is written again with every text and list
// cut (see fitContext), so that no agent can fill another's context
// through the board. A context within it is never cut: a working board's
// is a few KB.
const PromptContextMax = 32_000

// The cuts fitContext tries, in turn: texts of at most promptTextMax
// characters and lists of at most promptListMax entries at the first,
// halved at each next; the last leaves every text at 125 characters and
// every list at one entry.
const (
	promptTextMax = 4000
	promptListMax = 32
	promptRounds  = 6
)

// fitContext writes a context with write, as it is when it fits
// PromptContextMax, else cut, each round cutting more. A context that
// was cut ends with a line that says so, and where to read it whole.
func fitContext(write func(w *promptWriter) error) (string, error) {
	var b strings.Builder
	w := &promptWriter{b: &b}
	if err := write(w); err != nil {
		return "", err
	}
	for round := 0; b.Len() > PromptContextMax && round < promptRounds; round++ {
		b.Reset()
		w = &promptWriter{b: &b, textMax: promptTextMax >> round, listMax: max(promptListMax>>round, 1)}
		if err := write(w); err != nil {
			return "", err
		}
	}
	if w.cut {
		w.line("")
		w.line("Text marked […] was cut to fit this prompt, and so were long lists: git liza show ID prints a task whole, git liza show the whole board.")
	}
	return b.String(), nil
}

// promptWriter writes the context sections of a prompt. With textMax and
// listMax it cuts what the board holds (text and lists) to them; the
// names, ids and instructions it writes itself are never cut.
type promptWriter struct {
	b                *strings.Builder
	textMax, listMax int  // 0: no cut
	cut              bool // something was cut
}

func (w *promptWriter) section(name string) {
	if w.b.Len() > 0 {
		w.b.WriteString("\n")
	}
	fmt.Fprintf(w.b, "=== %s ===\n", name)
}

func (w *promptWriter) line(s string) { w.b.WriteString(s + "\n") }

// field writes a one-line field; a value on several lines becomes a block.
// What comes from the board goes through text first.
func (w *promptWriter) field(name, value string) {
	value = strings.TrimSpace(value)
	if strings.Contains(value, "\n") {
		w.block(name, value)
		return
	}
	w.line(name + ": " + orNone(value))
}

// block writes a field whose value is indented under its name.
func (w *promptWriter) block(name, value string) {
	w.line(name + ":")
	w.indented(orNone(strings.TrimSpace(value)))
}

func (w *promptWriter) indented(s string) {
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		w.line(strings.TrimRight("  "+l, " "))
	}
}

func (w *promptWriter) steps(steps []string) {
	w.line("INSTRUCTIONS:")
	for i, s := range steps {
		w.indented(fmt.Sprintf("%d. %s", i+1, s))
	}
}

// text is s from the board, cut to textMax characters (see CutText).
func (w *promptWriter) text(s string) string {
	if w.textMax == 0 {
		return s
	}
	cut, lost := CutText(s, w.textMax)
	w.cut = w.cut || lost > 0
	return cut
}

// some is how many of n entries of a list from the board to write, and
// how many are left out.
func (w *promptWriter) some(n int) (keep, more int) {
	if w.listMax == 0 || n <= w.listMax {
		return n, 0
	}
	w.cut = true
	return w.listMax, n - w.listMax
}

// joined is a list from the board on one line: its first entries, each
// cut as a text, and how many more there are.
func (w *promptWriter) joined(items []string) string {
	keep, more := w.some(len(items))
	parts := make([]string, 0, keep+1)
	for _, it := range items[:keep] {
		parts = append(parts, w.text(it))
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("… %d more", more))
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
