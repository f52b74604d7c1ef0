//go:build !unix

package proc

import "os/exec"

const groups = false

// ownGroup does nothing here: there are no process groups to keep.
func ownGroup(*exec.Cmd) {}
