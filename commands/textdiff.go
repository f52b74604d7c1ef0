package commands

import (
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/liza-dev/git-liza/contracts"
)

// longText is the length past which a changed value is shown as an inline
// difference instead of its old and new values side by side.
const longText = 60

// fieldLine is one changed field: "status: CLAIMED -> READY_FOR_REVIEW",
// "+ review_commit: 1a2b...", "- blocked_reason: ...", or for long texts
// the new text with what was removed in [-...-] and what was added in
// {+...+}, as git diff --word-diff marks them. Every part is made
// printable: values are an agent's text as often as not.
func fieldLine(f contracts.FieldChange) string {
	p := contracts.Printable
	field := p(f.Field)
	switch {
	case f.Added:
		return "+ " + field + ": " + p(contracts.OneLine(f.New))
	case f.Removed:
		return "- " + field + ": " + p(contracts.OneLine(f.Old))
	case len(f.Old)+len(f.New) > longText || strings.Contains(f.Old+f.New, "\n"):
		return field + ": " + inlineDiff(f.Old, f.New)
	}
	return field + ": " + p(contracts.OneLine(f.Old)) + " -> " + p(contracts.OneLine(f.New))
}

// inlineDiff marks what changed from a to b, word by word where it can, on
// one line: a newline shows as \n. The differ works on whole characters, so
// making each piece printable escapes the same characters as making the
// whole would.
func inlineDiff(a, b string) string {
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMain(a, b, false))
	var out strings.Builder
	for _, d := range diffs {
		text := contracts.Printable(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			out.WriteString(text)
		case diffmatchpatch.DiffDelete:
			out.WriteString("[-" + text + "-]")
		case diffmatchpatch.DiffInsert:
			out.WriteString("{+" + text + "+}")
		}
	}
	return out.String()
}
