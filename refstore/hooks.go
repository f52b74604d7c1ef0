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

// HooksDir is the directory git, run by a person or an agent, runs hooks
// from: core.hooksPath (a leading ~/ is the home directory, and a relative
// path is taken from base), else the hooks directory of the common
// directory. git-liza's own git processes run none from there (see
// contain.go).
func (r *Repo) HooksDir(base string) (string, error) {
	p, ok := r.ConfigAnyScope("core.hookspath")
	if !ok || p == "" {
		return filepath.Join(r.CommonDir, "hooks"), nil
	}
	return r.hooksPathDir(base, p)
}

// hooksPathDir resolves a value of core.hooksPath.
func (r *Repo) hooksPathDir(base, p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, rest)
	}
	return filepath.Clean(absFrom(base, p)), nil
}

// HasHook reports whether a git process git-liza starts here would run a
// hook called name: only from a core.hooksPath the user set (contain.go).
func (r *Repo) HasHook(name string) bool {
	_, ok := r.runHook(name)
	return ok
}

// runHook is the hook called name that a git process git-liza starts here
// would run, if any.
func (r *Repo) runHook(name string) (string, bool) {
	p, ok := r.Config("core.hookspath")
	if !ok || p == "" || p == os.DevNull {
		return "", false
	}
	base := r.WorkTree
	if base == "" {
		base = r.GitDir
	}
	dir, err := r.hooksPathDir(base, p)
	if err != nil {
		return "", false
	}
	path := filepath.Join(dir, name)
	fi, err := os.Stat(path)
	return path, err == nil && fi.Mode()&0o111 != 0
}
