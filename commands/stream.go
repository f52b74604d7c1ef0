package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// A whole state, as show and export print it, is written one entity at a
// time: the state without its long sections (tasks, archive, lists) is
// rendered with a marker entry in each, and each marker is replaced by the
// section's entries, read, rendered and written one after another. The
// output is byte for byte what rendering the whole state at once gives
// (TestStreamMatchesWhole), but memory holds one entity, not the board.

// marker is the first field's value of the entry that stands for a
// streamed section.
func marker(section string) string { return "liza-stream-marker-" + section }

// streamed is one long section of the state: how to mark it in the
// skeleton and how to write its entries.
type streamed struct {
	name  string
	count int
	mark  func(st *contracts.State)
	each  func(emit func(raw []byte) error) error
}

// writeState writes the state at snap as YAML, or JSON with asJSON, with
// its archive when archive is set. A state that is not trusted (its
// indexes may not match its tasks: see ops.Service.Trusted) is read whole
// instead.
func writeState(w io.Writer, snap *cas.Snapshot, trusted, archive, asJSON bool) error {
	if !trusted {
		st, err := snap.Load()
		if err != nil {
			return err
		}
		if !archive {
			st.Archive = nil
		}
		return render(w, st, asJSON)
	}
	st, err := snap.Header()
	if err != nil {
		return err
	}
	sections, err := streamSections(snap, archive)
	if err != nil {
		return err
	}
	for _, sec := range sections {
		if sec.count > 0 {
			sec.mark(st)
		}
	}
	var skel bytes.Buffer
	if err := render(&skel, st, asJSON); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	rest := skel.String()
	for _, sec := range sections {
		if sec.count == 0 {
			continue
		}
		before, after, indent, err := cutMarker(rest, marker(sec.name), asJSON)
		if err != nil {
			return err
		}
		bw.WriteString(before)
		first := true
		if err := sec.each(func(raw []byte) error {
			if asJSON && !first {
				bw.WriteString(",\n")
			}
			first = false
			return writeItem(bw, raw, indent, asJSON)
		}); err != nil {
			return err
		}
		if asJSON {
			bw.WriteString("\n")
		}
		rest = after
	}
	bw.WriteString(rest)
	return bw.Flush()
}

// streamSections lists the long sections of the state at snap in the
// order rendering meets them.
func streamSections(snap *cas.Snapshot, archive bool) ([]streamed, error) {
	// A section is a directory of tasks or a list, and where its marker
	// goes in the state.
	sections := []struct {
		name, dir string
		tasks     bool
		mark      func(st *contracts.State, m string)
	}{
		{"alignment", cas.ListAlignment, false, func(st *contracts.State, m string) {
			st.Goal.AlignmentHistory = []*contracts.AlignmentEntry{{Time: m}}
		}},
		{"tasks", cas.TasksDir, true, func(st *contracts.State, m string) { st.Tasks = []*contracts.Task{{ID: m}} }},
		{"archive", cas.ArchiveDir, true, func(st *contracts.State, m string) { st.Archive = []*contracts.Task{{ID: m}} }},
		{"anomalies", cas.ListAnomalies, false, func(st *contracts.State, m string) { st.Anomalies = []*contracts.Anomaly{{ID: m}} }},
		{"discovered", cas.ListDiscovered, false, func(st *contracts.State, m string) { st.Discovered = []*contracts.Discovery{{ID: m}} }},
		{"human_notes", cas.ListHumanNotes, false, func(st *contracts.State, m string) {
			st.HumanNotes = []*contracts.HumanNote{{Timestamp: m}}
		}},
		{"spec_changes", cas.ListSpecChanges, false, func(st *contracts.State, m string) {
			st.SpecChanges = []*contracts.SpecChange{{Timestamp: m}}
		}},
	}
	var out []streamed
	for _, sec := range sections {
		if sec.dir == cas.ArchiveDir && !archive {
			continue
		}
		st := streamed{name: sec.name, mark: func(st *contracts.State) { sec.mark(st, marker(sec.name)) }}
		var err error
		if sec.tasks {
			st.count, _, err = snap.Count(sec.dir)
			st.each = func(emit func(raw []byte) error) error {
				return snap.EachTaskRaw(sec.dir, func(_ string, raw []byte) error { return emit(raw) })
			}
		} else {
			st.count, err = snap.ListLen(sec.dir)
			st.each = func(emit func(raw []byte) error) error { return snap.EachEntryRaw(sec.dir, emit) }
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// render writes v as YAML, or as JSON with the same field names.
func render(w io.Writer, v any, asJSON bool) error {
	if asJSON {
		b, err := yamlJSON(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	b, err := contracts.EncodeYAML(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// cutMarker finds the entry whose first field holds mark in the rendered
// skeleton text and returns the text before it, the text after it, and the
// indentation of the entry's first line.
func cutMarker(text, mark string, asJSON bool) (before, after, indent string, err error) {
	lines := strings.SplitAfter(text, "\n")
	at := -1
	for i, l := range lines {
		if strings.Contains(l, mark) {
			at = i
			break
		}
	}
	if at < 0 || asJSON && at == 0 {
		return "", "", "", fmt.Errorf("internal error: the marker of a streamed section is missing")
	}
	start, end := at, at+1
	if asJSON {
		start = at - 1 // the "{" line
		indent = lines[start][:leading(lines[start])]
		for end < len(lines) && !strings.HasPrefix(lines[end], indent+"}") {
			end++
		}
		end++
	} else {
		indent = lines[at][:strings.Index(lines[at], "- ")]
		for end < len(lines) && leading(lines[end]) > len(indent) {
			end++
		}
	}
	join := func(ls []string) string { return strings.Join(ls, "") }
	return join(lines[:start]), join(lines[end:]), indent, nil
}

func leading(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// writeItem writes one entry of a streamed section at indent, from its
// file as stored: a YAML list item, or a JSON object without the
// separator that follows it. Every entity file of a state git-liza wrote
// (a trusted one) is the entity as contracts.EncodeYAML renders it, so the
// file's own lines are the entry's, shifted under the list.
func writeItem(w *bufio.Writer, raw []byte, indent string, asJSON bool) error {
	if asJSON {
		var n yaml.Node
		if err := yaml.Unmarshal(raw, &n); err != nil {
			return err
		}
		b, err := nodeJSONIndent(&n, indent)
		if err != nil {
			return err
		}
		w.WriteString(indent)
		_, err = w.Write(b)
		return err
	}
	for i, l := range strings.SplitAfter(string(raw), "\n") {
		switch {
		case l == "":
		case i == 0:
			w.WriteString(indent + "- ")
		case l != "\n": // an empty line of a block scalar stays empty
			w.WriteString(indent + "  ")
		}
		w.WriteString(l)
	}
	return nil
}
