//go:build unix

package proc

import "syscall"

// Running reports whether a process (not a zombie) has pid. kill(pid, 0)
// tells without signalling: ESRCH is no such process, EPERM one this
// user may not signal (it runs).
func Running(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return false
	}
	if in, ok := info(pid); ok && in.zombie {
		return false
	}
	return true
}
