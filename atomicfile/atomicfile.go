// Package atomicfile replaces a file whole: a reader sees the old content
// or the new, never half of either.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data, with mode perm, through a temporary file
// in the same directory and a rename; the directory is made if it is
// missing. A failed write leaves path as it was and no temporary file.
func Write(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), perm)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
