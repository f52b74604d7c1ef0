package commands

import (
	"errors"
	"strings"

	"github.com/liza-dev/git-liza/agent"
)

// stopReason is what a supervisor that stopped records on the board as
// why (ops.UnregisterRequest.Reason): a crash loop, or any other failure
// of its agent (an environment failure says its fix); nothing for a clean
// stop.
func stopReason(runErr error) string {
	switch {
	case runErr == nil, errors.Is(runErr, agent.ErrStale):
		return ""
	case errors.Is(runErr, agent.ErrCrashLoop):
		return firstLine(runErr.Error())
	default:
		return "stopped: " + strings.TrimPrefix(firstLine(runErr.Error()), "stopped: ")
	}
}
