package contracts

import (
	"slices"
	"strings"
)

// MaxDocs is seed 002's context diet, rule 1: "Each agent may reference at
// most 2 additional files".
const MaxDocs = 2

// CheckDocs checks the extra documents a task names (its docs) and returns
// them without repeats, in the order given: at most MaxDocs, each a path
// inside the repository, optionally with a #anchor as a spec_ref has, and
// none in .git. Whether each file is committed is a question for git, which
// the operations ask where they check spec_ref.
func CheckDocs(task string, docs []string) (StringList, error) {
	out := StringList{}
	for _, d := range docs {
		if err := checkDoc(d); err != nil {
			return nil, err
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > MaxDocs {
		return nil, Invalidf("task %s names %d documents: at most %d (seed 002's context diet)", task, len(out), MaxDocs)
	}
	return out, nil
}

// DocPath is the file part of a doc (or spec) reference: before any
// #anchor, without a leading "./".
func DocPath(ref string) string {
	path, _, _ := strings.Cut(ref, "#")
	return strings.TrimPrefix(path, "./")
}

// checkDoc checks the form of one doc reference.
func checkDoc(ref string) error {
	path := DocPath(ref)
	switch {
	case strings.TrimSpace(ref) == "":
		return Invalidf("empty document name in docs")
	case strings.Contains(ref, ","):
		return Invalidf("doc %q has a comma", ref)
	case strings.IndexFunc(ref, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		// A name the prompt prints must not move the reader's cursor.
		return Invalidf("doc %q has a control character", ref)
	case path == "" || strings.HasPrefix(path, "/") || strings.Contains("/"+path+"/", "/../"):
		return Invalidf("doc %q must be a path inside the repository", ref)
	}
	for _, part := range strings.Split(path, "/") {
		if strings.EqualFold(part, ".git") {
			return Invalidf("doc %q reaches into .git", ref)
		}
	}
	return nil
}

// validateDocs refuses, under RulesImport and later, a task's docs that
// CheckDocs refuses: more than MaxDocs, or a path outside the repository.
func validateDocs(ps *problems, where string, t *Task, rules int) {
	if rules < RulesImport || len(t.Docs) == 0 {
		return
	}
	if _, err := CheckDocs(t.ID, t.Docs); err != nil {
		ps.add(where, err.Error())
	}
}
