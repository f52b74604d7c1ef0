package refstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// HookMarker is the line that makes a hook script git-liza's own.
const HookMarker = "# installed by git-liza: do not edit; git liza hooks uninstall removes it"

// HookChainSuffix names the file a hook that was there before git-liza's
// is kept in, run first by git-liza's: pre-commit.liza-chained.
const HookChainSuffix = ".liza-chained"

// IsOwnHook reports whether a hook script carries git-liza's marker line.
func IsOwnHook(content []byte) bool {
	for _, line := range bytes.Split(content, []byte("\n")) {
		if string(bytes.TrimRight(line, "\r")) == HookMarker {
			return true
		}
	}
	return false
}

// NullID is the all-zero object id of the repository's format, which git
// passes to hooks for "no commit".
func (r *Repo) NullID() string { return r.algo.nullHex() }

// HooksDir is the directory git runs hooks from: core.hooksPath (a leading
// ~/ is the home directory, and a relative path is taken from base), else
// the hooks directory of the common directory.
func (r *Repo) HooksDir(base string) (string, error) {
	p, ok := r.Config("core.hookspath")
	if !ok || p == "" {
		return filepath.Join(r.CommonDir, "hooks"), nil
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, rest)
	}
	return filepath.Clean(absFrom(base, p)), nil
}

// HasHook reports whether git would run a hook called name here.
func (r *Repo) HasHook(name string) bool {
	fi, err := os.Stat(r.hookPath(name))
	return err == nil && fi.Mode()&0o111 != 0
}

// hookPath is where git, run in this repository's work tree (its git
// directory when it has none), looks for the hook called name.
func (r *Repo) hookPath(name string) string {
	base := r.WorkTree
	if base == "" {
		base = r.GitDir
	}
	dir, err := r.HooksDir(base)
	if err != nil {
		dir = filepath.Join(r.CommonDir, "hooks")
	}
	return filepath.Join(dir, name)
}
