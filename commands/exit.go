package commands

import (
	"context"
	"errors"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// exitCode maps an error to the exit code of the Liza taxonomy and the one
// line to print. This is the only place that decides exit codes.
func exitCode(err error) (contracts.Code, string) {
	msg := firstLine(err.Error())
	var ce *contracts.Error
	var ge *refstore.GitError
	switch {
	case errors.As(err, &ce):
		return ce.Code, msg
	case errors.As(err, &ge):
		return contracts.CodeGit, msg
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return contracts.CodeContention, msg
	}
	return contracts.CodeInvalid, msg
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
