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
// {+...+}, as git diff --word-diff marks them.
func fieldLine(f contracts.FieldChange) string {
	switch {
	case f.Added:
		return "+ " + f.Field + ": " + contracts.OneLine(f.New)
	case f.Removed:
		return "- " + f.Field + ": " + contracts.OneLine(f.Old)
	case len(f.Old)+len(f.New) > longText || strings.Contains(f.Old+f.New, "\n"):
		return f.Field + ": " + inlineDiff(f.Old, f.New)
	}
	return f.Field + ": " + contracts.OneLine(f.Old) + " -> " + contracts.OneLine(f.New)
}

// inlineDiff marks what changed from a to b, word by word where it can.
func inlineDiff(a, b string) string {
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMain(a, b, false))
	var out strings.Builder
	for _, d := range diffs {
		text := strings.ReplaceAll(d.Text, "\n", `\n`)
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
