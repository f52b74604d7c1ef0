package commands

import (
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// exitCode maps an error to the exit code of the Liza taxonomy (its class,
// ops.Class) and the one line to print. This is the only place that turns
// errors into exit codes.
func exitCode(err error) (contracts.Code, string) {
	return ops.Class(err), firstLine(err.Error())
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
