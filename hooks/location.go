package hooks

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Location is a hooks directory: where it is, and how to name it to a
// person (relative to the top of the main checkout when it is inside it).
type Location struct {
	Dir     string `json:"-"`
	Display string `json:"dir"`
	// Relative is core.hooksPath when it is a relative path in a
	// repository with a work tree. git resolves such a path in each
	// worktree (at its top, where it runs hooks), so the task worktrees
	// under .worktrees/ would look for hooks in their own copy of the
	// directory; Install refuses it.
	Relative string `json:"relative_hooks_path,omitempty"`

	top string // the top of the main checkout; empty in a bare repository
}

// Locate finds the directory git runs repo's hooks from: core.hooksPath
// when set, else the hooks directory of the common git directory, which
// every worktree shares. A relative core.hooksPath is taken from the top
// of the main checkout (from the git directory of a bare repository), so
// that every worktree of the repository names the same directory; git
// itself takes it from the top of the worktree it runs in, which is why
// Install refuses one (see Location.Relative).
func Locate(repo *refstore.Repo) (Location, error) {
	top := repo.MainWorkTree()
	base := top
	if base == "" {
		base = repo.Dir()
	}
	dir, err := repo.HooksDir(base)
	p, _ := repo.ConfigAnyScope("core.hooksPath")
	if err != nil {
		return Location{}, contracts.Invalidf("core.hooksPath %s: %v", p, err)
	}
	loc := Location{Dir: dir, top: top}
	if p != "" && top != "" && !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
		loc.Relative = p
	}
	loc.Display = loc.Dir
	if rel, ok := inside(base, loc.Dir); ok {
		loc.Display = rel
	}
	return loc, nil
}

// RelativeWarning says what a relative core.hooksPath means, and how to
// fix it; empty when the path is absolute.
func (l Location) RelativeWarning() string {
	if l.Relative == "" {
		return ""
	}
	return fmt.Sprintf("core.hooksPath is relative (%s): git looks for hooks in each worktree's own %s, so task worktrees (.worktrees/ID) would not run git-liza's; make it absolute: %s",
		l.Relative, l.Relative, l.MakeAbsolute())
}

// MakeAbsolute is the command that makes a relative core.hooksPath the
// absolute path of the directory it names in the main checkout.
func (l Location) MakeAbsolute() string {
	return "git config core.hooksPath " + shellQuote(l.Dir)
}

// At is the hooks directory dir, which git runs one worktree's hooks from
// (with a relative core.hooksPath each worktree has its own), seen as l
// sees its own: the same hook managers are recognised there.
func (l Location) At(dir string) Location {
	l.Dir, l.Display = dir, dir
	if l.top != "" {
		if rel, ok := inside(l.top, dir); ok {
			l.Display = rel
		}
	}
	return l
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Path is the file of hook name.
func (l Location) Path(name string) string { return filepath.Join(l.Dir, name) }

func (l Location) display(name string) string {
	if l.Display == "." {
		return name
	}
	return l.Display + "/" + name
}

// Script is hook name's script for this location.
func (l Location) Script(name string, chained bool) string {
	return Script(name, l.display(name), chained)
}
