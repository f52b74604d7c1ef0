package contracts

import (
	"path"
	"strings"
)

// Owned paths (seed 001's write ownership): a task may declare the paths it
// writes, as directories ("src/retry", "src/retry/") or globs
// ("src/*.go", "docs/**"). Two in-flight tasks may not own overlapping
// paths, and a submission may not touch files outside its task's paths.

// literalPrefix is the part of a pattern before its first wildcard.
func literalPrefix(p string) string {
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		return p[:i]
	}
	return p
}

func cleanPattern(p string) string {
	p = strings.TrimPrefix(strings.TrimSpace(p), "./")
	return strings.TrimSuffix(p, "/")
}

// PathMatches reports whether file lies under pattern: the pattern itself,
// a file below it when it names a directory, or a match of the glob (where
// "**" matches any number of directories).
func PathMatches(pattern, file string) bool {
	pattern, file = cleanPattern(pattern), strings.TrimPrefix(file, "./")
	if pattern == "" || pattern == "**" {
		return true
	}
	if !strings.ContainsAny(pattern, "*?[") {
		return file == pattern || strings.HasPrefix(file, pattern+"/")
	}
	if strings.HasSuffix(pattern, "/**") {
		base := strings.TrimSuffix(pattern, "/**")
		if !strings.ContainsAny(base, "*?[") {
			return file == base || strings.HasPrefix(file, base+"/")
		}
	}
	if ok, _ := path.Match(pattern, file); ok {
		return true
	}
	// A glob naming directories covers what is below them.
	for dir := path.Dir(file); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if ok, _ := path.Match(pattern, dir); ok {
			return true
		}
	}
	return false
}

// PathsOverlap reports whether two sets of owned paths may name a common
// file, and the first pair that does. Globs are compared by their literal
// prefixes, so the answer errs on the side of overlap. An empty set owns
// nothing.
func PathsOverlap(a, b StringList) (string, string, bool) {
	for _, x := range a {
		for _, y := range b {
			px, py := literalPrefix(cleanPattern(x)), literalPrefix(cleanPattern(y))
			if prefixOverlap(px, py, x != px, y != py) {
				return x, y, true
			}
		}
	}
	return "", "", false
}

// prefixOverlap compares two literal prefixes; a glob's prefix may end
// mid-name ("src/ret" of "src/ret*"), a plain path's may not.
func prefixOverlap(x, y string, xGlob, yGlob bool) bool {
	if x == "" || y == "" || x == y {
		return true
	}
	under := func(short, long string, shortGlob bool) bool {
		if !strings.HasPrefix(long, short) {
			return false
		}
		return shortGlob || strings.HasSuffix(short, "/") || long[len(short)] == '/'
	}
	if len(x) <= len(y) {
		return under(x, y, xGlob)
	}
	return under(y, x, yGlob)
}

// ValidPath checks an owned-path pattern: relative, no "..", no separators
// that the index or the command line use, and nothing of what git-liza and
// git keep beside the work: a segment named .git in any case (git's own
// directory, or a submodule's; on a case-insensitive file system .GIT is
// the same directory), .liza/ (the kill switches) and .worktrees/ (the
// other tasks' checkouts). A task owning one of these would let its coder
// commit there or hold it against everyone else.
func ValidPath(p string) error {
	c := cleanPattern(p)
	switch {
	case c == "":
		return Invalidf("empty path in --paths")
	case strings.HasPrefix(c, "/"):
		return Invalidf("path %q must be relative to the repository", p)
	case strings.ContainsAny(c, "\t\n,"):
		return Invalidf("path %q has a tab, newline or comma", p)
	}
	for i, part := range strings.Split(c, "/") {
		switch {
		case part == "..":
			return Invalidf("path %q leaves the repository", p)
		case strings.EqualFold(part, ".git"):
			return Invalidf("path %q reaches into .git, which no task owns", p)
		case i == 0 && keptByLiza(part):
			return Invalidf("path %q reaches into %s/, which git-liza keeps and no task owns", p, part)
		}
	}
	if _, err := path.Match(c, ""); err != nil {
		return Invalidf("path %q is not a valid glob", p)
	}
	return nil
}

// keptByLiza reports whether a path's first segment is a directory git-liza
// keeps in the main checkout: .liza/ (the kill switches) or .worktrees/
// (the tasks' checkouts).
func keptByLiza(first string) bool {
	return strings.EqualFold(first, ".liza") || strings.EqualFold(first, ".worktrees")
}

// CheckChangedPath refuses a file a task's change may not touch, whatever
// paths the task owns (none included): one with a segment git takes for its
// own directory (.git in any case, and the names Windows resolves to it:
// .git with trailing dots or spaces, git~1), which git refuses to check out,
// so that a tree holding one, merged, stops every claim and checkout of the
// integration branch; and one under .liza/ (the kill switches) or
// .worktrees/ (the other tasks' checkouts, which git overwrites without a
// word where it checks the file out in the main checkout, since they are
// ignored there), which ValidPath keeps any task from owning.
func CheckChangedPath(file string) error {
	for i, part := range strings.Split(file, "/") {
		switch {
		case strings.EqualFold(strings.TrimRight(part, ". "), ".git") || strings.EqualFold(part, "git~1"):
			return Invalidf("the change touches %s, inside .git, which git refuses to check out and no task owns", file)
		case i == 0 && keptByLiza(part):
			return Invalidf("the change touches %s, under %s/, which git-liza keeps and no task owns", file, part)
		}
	}
	return nil
}

// validatePaths refuses, under RulesImport and later, owned paths that
// ValidPath refuses: a state that says a task owns .git/config is as wrong
// as the command that would have written it.
func validatePaths(ps *problems, where string, t *Task, rules int) {
	if rules < RulesImport {
		return
	}
	for _, p := range t.Paths {
		if err := ValidPath(p); err != nil {
			ps.add(where, err.Error())
		}
	}
}
