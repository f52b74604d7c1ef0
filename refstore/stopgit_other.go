//go:build !linux

package refstore

import "os/exec"

// stopGroup kills the process group ownGroup gave cmd. Where the
// processes' open files cannot be read, a stopped fetch's temporary files
// are left to git gc.
func stopGroup(cmd *exec.Cmd, objects string) error { return killGroup(cmd) }

// packTemps and removeLeftTemps do nothing where the processes' open
// files cannot be read.
func packTemps(string) map[string]bool { return nil }

func removeLeftTemps(string, map[string]bool) {}
