//go:build !linux && !darwin

package proc

import "time"

// Elsewhere (Windows, the BSDs) git-liza reads no process table: no
// git process can be seen, so none can be said to be absent (GitIn and
// Using report known false), and start times are unknown.

func processes() ([]int, bool) { return nil, false }

func info(int) (procInfo, bool) { return procInfo{}, false }

func cwds([]int) map[int]string { return map[int]string{} }

func argsEnv(int) (args, env []string) { return nil, nil }

// StartTime is unknown here.
func StartTime(int) (time.Time, bool) { return time.Time{}, false }
