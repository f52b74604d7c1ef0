//go:build crashpoints

package commands

import (
	"os"
	"strings"
	"syscall"

	"github.com/liza-dev/git-liza/proc"
)

// A build with the tag crashpoints (the crash-injection test builds one)
// kills itself with SIGKILL at the crash point LIZA_CRASH_AT names, as a
// crash there would. LIZA_CRASH_AT=POINT kills the process alone;
// LIZA_CRASH_AT=POINT:group kills its process group too (the git commands
// it runs). The shipped binary has no such switch.
func init() {
	at := os.Getenv("LIZA_CRASH_AT")
	if at == "" {
		return
	}
	point, group := strings.CutSuffix(at, ":group")
	proc.SetCrashHook(func(p string) {
		if p != point {
			return
		}
		if group {
			syscall.Kill(0, syscall.SIGKILL)
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	})
}
