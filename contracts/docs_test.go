package contracts

import (
	"slices"
	"strings"
	"testing"
)

// TestCheckDocs: at most two documents once repeats are dropped, each a
// path inside the repository (a #anchor allowed, as in spec_ref), none in
// .git in any case.
func TestCheckDocs(t *testing.T) {
	got, err := CheckDocs("t", []string{"docs/a.md", "./b.md#usage", "docs/a.md"})
	if err != nil || !slices.Equal(got, []string{"docs/a.md", "./b.md#usage"}) {
		t.Fatalf("CheckDocs = %q, %v", got, err)
	}
	if got, err := CheckDocs("t", nil); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("CheckDocs(nil) = %#v, %v; want an empty list", got, err)
	}
	for _, bad := range [][]string{
		{"a.md", "b.md", "c.md"}, {""}, {" "}, {"/etc/passwd"}, {"../x.md"}, {"docs/../../x.md"}, {".git/config"},
		{"sub/.Git/HEAD"}, {"#anchor"}, {"a.md,b.md"}, {"a\nb.md"}, {"a\x1b[2Jb.md"}, {"a.md#\x1b]0;x\x07"}, {"a\x7f.md"},
	} {
		if _, err := CheckDocs("t", bad); err == nil {
			t.Errorf("CheckDocs(%q) accepted", bad)
		}
	}
}

// A state that gives a task three docs, or one in .git, is invalid under
// the rules of imports, as the command that would have written it refuses.
func TestValidateDocs(t *testing.T) {
	tk := task("t", Unclaimed)
	tk.Docs = StringList{"a.md", "b.md", "c.md"}
	ps := ValidateTaskUnder(tk, RulesImport)
	if len(ps) != 1 || !strings.Contains(ps[0].String(), "task t names 3 documents: at most 2") {
		t.Errorf("problems = %v", ps)
	}
	tk.Docs = StringList{".git/config"}
	if ps := ValidateTaskUnder(tk, RulesImport); len(ps) != 1 {
		t.Errorf("problems for .git/config = %v", ps)
	}
	tk.Docs = StringList{"a.md", "b.md"}
	if ps := ValidateTaskUnder(tk, RulesImport); len(ps) != 0 {
		t.Errorf("problems for two docs = %v", ps)
	}
}
