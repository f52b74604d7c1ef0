package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/refstore"
)

// stubs are the exclude patterns of the files the preset's own sandbox
// leaves behind, when it runs with its sandbox.
func (s *sup) stubs() []string {
	p := s.Launch.Preset
	if p == nil || s.Launch.Sandboxed || len(p.Stubs) == 0 {
		return nil
	}
	out := make([]string, 0, len(p.Stubs))
	for _, n := range p.Stubs {
		out = append(out, "/"+n)
	}
	return out
}

// removeStubs removes what a sandbox left at the top of dir: each named
// entry that is an empty file, or a tree of empty directories and empty
// files, and is not tracked by git. Anything with content is left alone.
func removeStubs(dir string, names []string) {
	var empty []string
	for _, n := range names {
		if emptyTree(filepath.Join(dir, n)) {
			empty = append(empty, n)
		}
	}
	if len(empty) == 0 {
		return
	}
	out, err := refstore.Run(context.Background(), dir, nil, append([]string{"ls-files", "-z", "--"}, empty...)...)
	if err != nil {
		return
	}
	tracked := strings.Split(string(out), "\x00")
	for _, n := range empty {
		if !slices.ContainsFunc(tracked, func(f string) bool { return f == n || strings.HasPrefix(f, n+"/") }) {
			_ = os.RemoveAll(filepath.Join(dir, n))
		}
	}
}

// emptyTree reports whether p is an empty file, or a directory holding
// nothing but empty files and directories.
func emptyTree(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		return fi.Mode().IsRegular() && fi.Size() == 0
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !emptyTree(filepath.Join(p, e.Name())) {
			return false
		}
	}
	return true
}
