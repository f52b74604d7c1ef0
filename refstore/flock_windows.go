package refstore

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// flockDir takes no lock on Windows, where a directory cannot be locked:
// git-liza's writers do not take turns there (RefTurn), and the judgement
// of git's lock files, which this serialises, never finds one stale there
// (no process table is read). Every ref move still checks the old value.
func flockDir(string) (func(), error) { return func() {}, nil }

// flockFile locks f's first byte (LockFileEx), waiting for it when wait is
// set; held is false (and err nil) when another holds it and wait is not.
// Closing f releases it, as does the end of the process.
func flockFile(f *os.File, wait bool) (held bool, err error) {
	flags := uint32(windows.LOCKFILE_EXCLUSIVE_LOCK)
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	var ol windows.Overlapped
	switch err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol); {
	case err == nil:
		return true, nil
	case !wait && errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	default:
		return false, err
	}
}
