//go:build unix

package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// rootOnly reports why gemini would not read a system settings file in dir
// (made now if missing): this process is not root, or dir or a directory
// above it (or a symbolic link among them) is not owned by root or is
// writable by group or others.
func rootOnly(dir string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("gemini reads a session's settings only from a file root owns, and this supervisor is not root")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	paths := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		paths = append(paths, real)
	}
	for _, p := range paths {
		for d := p; ; d = filepath.Dir(d) {
			if err := rootOwned(d); err != nil {
				return err
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return nil
}

func rootOwned(p string) error {
	for _, stat := range []func(string) (os.FileInfo, error){os.Lstat, os.Stat} {
		fi, err := stat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != 0 {
			return fmt.Errorf("gemini reads a session's settings only from a file root owns, and %s is not owned by root", p)
		}
		if fi.Mode()&os.ModeSymlink == 0 && fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("gemini reads a session's settings only from a file no one but root may write, and %s is writable by group or others", p)
		}
	}
	return nil
}
