package main

import (
	"os"
	"os/exec"
	"time"
)

// Windows has no process groups: a team is stopped by killing its
// git-liza run alone (which Windows refuses to start anyway).
func ownGroup(*exec.Cmd) {}

func stopGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func syncDisks() {}

// maxRSSKB is unknown here.
func maxRSSKB(*os.ProcessState) (int64, bool) { return 0, false }

// selfCPU is unknown here.
func selfCPU() time.Duration { return 0 }

// killPID kills process pid outright (the soak's -soak-kill).
func killPID(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Kill() == nil
}
