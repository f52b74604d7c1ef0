package ops

import (
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/liza-dev/git-liza/contracts"
)

// LongText is the length past which a changed value is shown as an inline
// difference instead of its old and new values side by side.
const LongText = 60

// IsLong reports whether a changed field is shown as an inline difference
// (WordDiff) rather than as its old and new values.
func IsLong(f contracts.FieldChange) bool {
	return !f.Added && !f.Removed && (len(f.Old)+len(f.New) > LongText || strings.Contains(f.Old+f.New, "\n"))
}

// The kinds of a DiffPiece.
const (
	Same     = 0
	Deleted  = -1
	Inserted = 1
)

// DiffPiece is one run of an inline difference: text both sides share
// (Same), text only the old one has (Deleted) or only the new one
// (Inserted). Text is as the values hold it, not made printable: each
// front end escapes it for its own screen.
type DiffPiece struct {
	Kind int
	Text string
}

// WordDiff is what changed from a to b, word by word where it can: the
// command line marks it as git diff --word-diff does, the web board with
// its own marks.
func WordDiff(a, b string) []DiffPiece {
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMain(a, b, false))
	out := make([]DiffPiece, 0, len(diffs))
	for _, d := range diffs {
		k := Same
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			k = Deleted
		case diffmatchpatch.DiffInsert:
			k = Inserted
		}
		out = append(out, DiffPiece{Kind: k, Text: d.Text})
	}
	return out
}

// FieldLine is one changed field on one line, for a terminal: "status:
// CLAIMED -> READY_FOR_REVIEW", "+ review_commit: 1a2b...", "-
// blocked_reason: ...", or for long texts the new text with what was
// removed in [-...-] and what was added in {+...+}, as git diff
// --word-diff marks them (a newline shows as \n). Every part is made
// printable: values are an agent's text as often as not. The differ works
// on whole characters, so making each piece printable escapes the same
// characters as making the whole would.
func FieldLine(f contracts.FieldChange) string {
	p := contracts.Printable
	field := p(f.Field)
	switch {
	case f.Added:
		return "+ " + field + ": " + p(contracts.OneLine(f.New))
	case f.Removed:
		return "- " + field + ": " + p(contracts.OneLine(f.Old))
	case IsLong(f):
		var out strings.Builder
		for _, d := range WordDiff(f.Old, f.New) {
			text := p(d.Text)
			switch d.Kind {
			case Same:
				out.WriteString(text)
			case Deleted:
				out.WriteString("[-" + text + "-]")
			case Inserted:
				out.WriteString("{+" + text + "+}")
			}
		}
		return field + ": " + out.String()
	}
	return field + ": " + p(contracts.OneLine(f.Old)) + " -> " + p(contracts.OneLine(f.New))
}
