//go:build unix

package main

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// ownGroup starts cmd (a team) in a process group of its own, which
// stopGroup and killGroup signal whole.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func stopGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// syncDisks writes what the system holds back to the disks.
func syncDisks() { syscall.Sync() }

// maxRSSKB is the most memory an ended process held, in kilobytes:
// getrusage counts kilobytes on Linux and bytes on macOS.
func maxRSSKB(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) / 1024, true
	}
	return int64(ru.Maxrss), true
}

// selfCPU is the bench process's processor time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// killPID kills process pid outright (the soak's -soak-kill).
func killPID(pid int) bool { return syscall.Kill(pid, syscall.SIGKILL) == nil }
