package contracts

import (
	"fmt"
	"strings"
)

// Seed 002's scope limit for one step of work: "Stays within ≤150 LOC or ≤2
// files", checked after the work as "LOC modified ≤150 OR files modified ≤2
// (hard stop if exceeded)". A change passes when it meets either bound.
const (
	DefaultMaxLOC   = 150
	DefaultMaxFiles = 2
)

// ScopeLimit is the size bound a submission of t must meet: the planner's
// max_files and max_loc, or seed 002's 2 files / 150 lines when the task
// sets neither. Zero means no bound of that kind. When both are set, a
// change meeting either passes.
func (t *Task) ScopeLimit() (files, loc int) {
	if t.MaxFiles <= 0 && t.MaxLOC <= 0 {
		return DefaultMaxFiles, DefaultMaxLOC
	}
	return max(t.MaxFiles, 0), max(t.MaxLOC, 0)
}

// ScopeLimitText describes t's scope limit for people and prompts, or ""
// when it has none.
func (t *Task) ScopeLimitText() string {
	files, loc := t.ScopeLimit()
	var parts []string
	if files > 0 {
		parts = append(parts, fmt.Sprintf("at most %s", Plural(files, "file")))
	}
	if loc > 0 {
		parts = append(parts, fmt.Sprintf("at most %d lines added and removed", loc))
	}
	return strings.Join(parts, " or ")
}

// CheckScopeSize refuses a change of files files and loc lines (added plus
// removed) that meets none of t's bounds (exit 1).
func CheckScopeSize(t *Task, files, loc int) error {
	maxFiles, maxLOC := t.ScopeLimit()
	filesOK := maxFiles > 0 && files <= maxFiles
	locOK := maxLOC > 0 && loc <= maxLOC
	switch {
	case filesOK, locOK:
		return nil
	case maxLOC == 0:
		return Invalidf("the change touches %d files; task %s allows %d", files, t.ID, maxFiles)
	case maxFiles == 0:
		return Invalidf("the change adds and removes %d lines; task %s allows %d", loc, t.ID, maxLOC)
	}
	return Invalidf("the change touches %s and adds and removes %d lines; task %s allows %s",
		Plural(files, "file"), loc, t.ID, t.ScopeLimitText())
}
