package refstore

import (
	"os"
	"path/filepath"
	"strings"
)

// NullID is the all-zero object id of the repository's format, which git
// passes to hooks for "no commit".
func (r *Repo) NullID() string { return r.algo.nullHex() }

// HasHook reports whether git would run a hook called name here.
func (r *Repo) HasHook(name string) bool {
	fi, err := os.Stat(r.hookPath(name))
	return err == nil && fi.Mode()&0o111 != 0
}

// hookPath is where git looks for the hook called name: core.hooksPath
// (relative to the top of the work tree), else the hooks directory of the
// common directory.
func (r *Repo) hookPath(name string) string {
	dir := filepath.Join(r.CommonDir, "hooks")
	if p, ok := r.Config("core.hookspath"); ok && p != "" {
		if strings.HasPrefix(p, "~/") {
			home, _ := os.UserHomeDir()
			p = filepath.Join(home, p[2:])
		}
		base := r.WorkTree
		if base == "" {
			base = r.GitDir
		}
		dir = absFrom(base, p)
	}
	return filepath.Join(dir, name)
}
