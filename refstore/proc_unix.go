//go:build unix

package refstore

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup puts cmd in a process group of its own, so that a signal sent
// to the group of the process that started it (a supervisor stopped with
// kill -TERM -PGID, a terminal's Ctrl-C) does not reach it. A ref
// transaction must finish or abort on its own terms: killed half-way, the
// supervisor's last write (the one that retires its registration) is lost.
// The transaction still ends when its starter does: its standard input
// closes, and git aborts a transaction that was not committed.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group ownGroup gave cmd.
func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// inodeOf is the inode number of a file, 0 where the system has none.
func inodeOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
