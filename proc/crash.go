package proc

// crashHook is called at each crash point; nil in the shipped binary. A
// test build sets it (commands/crashpoints.go, build tag crashpoints) to
// kill the process at the point a crash test names.
var crashHook func(point string)

// SetCrashHook installs f as the crash hook.
func SetCrashHook(f func(point string)) { crashHook = f }

// CrashPoint marks a place where a crash leaves something half done, such
// as "claim:worktree" (the worktree exists, the claim is not committed).
func CrashPoint(point string) {
	if crashHook != nil {
		crashHook(point)
	}
}
