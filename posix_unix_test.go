//go:build unix

package main

import "syscall"

// The end-to-end tests start teams in process groups of their own and
// signal them whole; these are the calls they make, per system.

func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup signals the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
