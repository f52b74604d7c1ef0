package cas

import (
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// ClockFromEnv is the one source of time for every command and hook:
// LIZA_NOW, read through getenv, pins it (tests, demos, reproducible
// histories); otherwise it is the wall clock.
func ClockFromEnv(getenv func(string) string) (func() time.Time, error) {
	v := getenv("LIZA_NOW")
	if v == "" {
		return time.Now, nil
	}
	t, err := contracts.ParseTime(v)
	if err != nil {
		return nil, contracts.Invalidf("LIZA_NOW=%q is not a time like 2026-01-17T10:00:00Z", v)
	}
	return func() time.Time { return t }, nil
}
