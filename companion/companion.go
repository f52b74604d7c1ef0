// Package companion finds git-liza's companion programs (git-liza-board,
// git-liza-http, git-liza-mcp, git-liza-serve): the programs of their own that keep heavy
// libraries out of the start-up of short commands.
package companion

import (
	"os"
	"os/exec"
	"path/filepath"
)

// Find looks for the program name beside the running program first (go
// install puts them in the same directory), else on PATH, and says whether
// it found one.
func Find(name string) (string, bool) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	return "", false
}
