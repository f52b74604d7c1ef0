//go:build !unix

package refstore

import (
	"io/fs"
	"os"
)

func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

func openRead(name string) (*os.File, error) { return os.Open(name) }

// ReadFile is os.ReadFile (see fileio_unix.go).
func ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
