//go:build !unix

package main

import (
	"os"
	"syscall"
)

// Without process groups (Windows, where git liza run is refused), the
// end-to-end tests' signals kill the one process.

func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
