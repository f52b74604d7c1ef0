package mcpserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A result that fits comes back as it was, byte for byte.
func TestFitLeavesWhatFits(t *testing.T) {
	raw := []byte(`{"b":1,"a":"x","list":[1,2,3]}`)
	got, note, err := fit(raw, "git liza x")
	if err != nil || note != "" || string(got) != string(raw) {
		t.Fatalf("fit = %s, %q, %v", got, note, err)
	}
}

// A result over the bound keeps its shape: keys in their order, numbers,
// booleans and short texts whole; long texts keep their start and end,
// long lists their first and last entries; and it decodes into the type
// it came from.
func TestFitCutsTextsAndLists(t *testing.T) {
	type entry struct {
		N    int    `json:"n"`
		Text string `json:"text"`
	}
	type doc struct {
		Zeta    string   `json:"zeta"`
		Alpha   bool     `json:"alpha"`
		Long    string   `json:"long"`
		Entries []entry  `json:"entries"`
		IDs     []string `json:"ids"`
	}
	d := doc{Zeta: "z", Alpha: true, Long: "START" + strings.Repeat("é", 60_000) + "END"}
	for i := range 1000 {
		d.Entries = append(d.Entries, entry{N: i, Text: strings.Repeat("x", 100)})
		d.IDs = append(d.IDs, fmt.Sprintf("id-%d", i))
	}
	raw, _ := json.Marshal(d)
	got, note, err := fit(raw, "git liza x --json")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > resultMax {
		t.Fatalf("%d bytes, over %d", len(got), resultMax)
	}
	if !strings.HasPrefix(string(got), `{"zeta":"z","alpha":true,"long":"START`) {
		t.Errorf("the keys' order or the short fields changed: %.80s", got)
	}
	var back doc
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("the cut result does not decode into its type: %v", err)
	}
	if !strings.HasSuffix(back.Long, "END") || !strings.Contains(back.Long, "characters cut…]") {
		t.Errorf("long = %.40q…%q", back.Long, back.Long[len(back.Long)-20:])
	}
	if n := len(back.Entries); n == 0 || n >= 1000 || back.Entries[0].N != 0 || back.Entries[n-1].N != 999 {
		t.Errorf("entries: %d kept, first %v", n, back.Entries[:1])
	}
	if n := len(back.IDs); n == 0 || back.IDs[0] != "id-0" || back.IDs[n-1] != "id-999" {
		t.Errorf("ids: %d kept", n)
	}
	for _, w := range []string{"cut to fit 40000 characters", "1 text over", "kept its start and end", "2 lists over", "git liza x --json, run in your shell"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q lacks %q", note, w)
		}
	}
}

// What cannot fit however cut (an object of more keys than the bound
// holds: objects are not cut, for a type's fields are all required) is a
// refusal that names the command printing it, not a result over the
// bound.
func TestFitRefusesWhatCannotFit(t *testing.T) {
	m := map[string]int{}
	for i := range 10_000 {
		m[fmt.Sprintf("key-%05d", i)] = i
	}
	raw, _ := json.Marshal(m)
	if _, _, err := fit(raw, "git liza show ID --json"); err == nil || !strings.Contains(err.Error(), "git liza show ID --json prints it") {
		t.Fatalf("fit = %v", err)
	}
}

// Cut in later rounds, a text still keeps both its ends and its mark
// counts every character it lost, and the lists count every entry.
func TestFitCutsAgain(t *testing.T) {
	var doc struct {
		Texts []string `json:"texts"`
		IDs   []int    `json:"ids"`
	}
	for i := range 20 {
		doc.Texts = append(doc.Texts, fmt.Sprintf("S%02d", i)+strings.Repeat("x", 9994)+fmt.Sprintf("E%02d", i))
	}
	for i := range 5000 {
		doc.IDs = append(doc.IDs, i)
	}
	raw, _ := json.Marshal(doc)
	got, note, err := fit(raw, "git liza x")
	if err != nil || len(got) > resultMax {
		t.Fatalf("fit: %d bytes, %v", len(got), err)
	}
	var back struct {
		Texts []string `json:"texts"`
		IDs   []int    `json:"ids"`
	}
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if n := len(back.Texts); n != 20 {
		t.Fatalf("%d texts kept, want all 20 (a list of 20 is not cut)", n)
	}
	for i, s := range back.Texts {
		head, tail, lost, ok := splitMark(t, s)
		if !ok || !strings.HasPrefix(head, fmt.Sprintf("S%02d", i)) || !strings.HasSuffix(tail, fmt.Sprintf("E%02d", i)) ||
			lost+len(head)+len(tail) != 10000 || len(head)+len(tail) > 1000 {
			t.Fatalf("text %d: %d+%d kept, %d lost (%v)", i, len(head), len(tail), lost, ok)
		}
	}
	if n := len(back.IDs); back.IDs[0] != 0 || back.IDs[n-1] != 4999 || !strings.Contains(note, fmt.Sprintf("(%d entries cut)", 5000-n)) {
		t.Errorf("ids: %d kept; note %q", n, note)
	}
	if !strings.Contains(note, "20 texts over 1000 characters") || !strings.Contains(note, fmt.Sprintf("(%d characters cut", 20*9000)) {
		t.Errorf("note %q", note)
	}
}

// cutMark is a text cut by contracts.CutText: what it kept before and
// after its mark, and how many characters the mark says it lost.
var cutMark = regexp.MustCompile(`(?s)^(.*) \[…([0-9]+) characters cut…\] (.*)$`)

func splitMark(t *testing.T, s string) (head, tail string, lost int, ok bool) {
	t.Helper()
	m := cutMark.FindStringSubmatch(s)
	if m == nil {
		return "", "", 0, false
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		t.Fatal(err)
	}
	return m[1], m[3], n, true
}
