package notify

import (
	"os"
	"os/exec"

	"golang.org/x/sys/windows"
)

// Windows has no process groups to kill whole: the command alone is
// killed (a shell channel runs /bin/sh, which Windows lacks anyway).
func ownGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// lockFile waits for the exclusive lock of f's first byte; closing f
// lets it go.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}
