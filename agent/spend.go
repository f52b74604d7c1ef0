package agent

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/transcript"
)

// sessionUsage is what a session's CLI reported it spent, for its end's
// record: nil when it reported nothing. A usage that names no model is
// taken to be at the model the supervisor knows the CLI runs (codex's
// stream names none). A usage past the bounds is dropped with an event:
// the session's end is recorded without it rather than not at all.
func (s *sup) sessionUsage(ses *session) *contracts.Usage {
	if ses.tw == nil {
		return nil
	}
	// Spent, not the Summary's usage: a Claude Code session stopped
	// before its result event (at a budget, a timebox) reports its
	// requests' usage only turn by turn.
	u := ses.tw.Spent()
	if u.IsZero() && u.Model == "" {
		return nil
	}
	if u.Model == "" {
		u.Model = ses.model
	}
	u.Model = modelName(u.Model)
	if err := contracts.ValidSessionUsage(u); err != nil {
		s.eventf(EventError, "", "the session's usage is not recorded: %v", err)
		return nil
	}
	return &u
}

// modelName is a model name as the board records it: the agent's stream
// names it, and may put a line break, a terminal escape or a bidi override
// in it; each character Printable would escape is recorded as ?, so that
// the name is one printable line in the board's files.
func modelName(m string) string {
	return strings.Map(func(r rune) rune {
		if contracts.Unprintable(r) {
			return '?'
		}
		return r
	}, m)
}

// launchModel is the model the agent CLI is told to use, when its stream
// will not say: codex's --model/-m or -c model=... on its command line,
// else the top-level model of its config.toml ($CODEX_HOME, else
// ~/.codex, in the agents' environment). "" when unknown: the session's
// tokens are then recorded unpriced.
func launchModel(format string, argv, env []string) string {
	if format != transcript.FormatCodex {
		return ""
	}
	for i, a := range argv {
		next := ""
		if i+1 < len(argv) {
			next = argv[i+1]
		}
		switch {
		case a == "-m" || a == "--model":
			return next
		case strings.HasPrefix(a, "--model="):
			return strings.TrimPrefix(a, "--model=")
		case (a == "-c" || a == "--config") && strings.HasPrefix(next, "model="):
			return strings.Trim(strings.TrimPrefix(next, "model="), `"'`)
		}
	}
	home := envValue(env, "CODEX_HOME")
	if home == "" {
		if h := envValue(env, "HOME"); h != "" {
			home = filepath.Join(h, ".codex")
		}
	}
	if home == "" {
		return ""
	}
	f, err := os.Open(filepath.Join(home, "config.toml"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 256<<10))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			return "" // past the top-level keys
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "model" {
			continue
		}
		v = strings.TrimSpace(v)
		if q, ok := strings.CutPrefix(v, `"`); ok {
			q, _, _ = strings.Cut(q, `"`)
			return q
		}
		v, _, _ = strings.Cut(v, "#")
		return strings.TrimSpace(v)
	}
	return ""
}

// envValue is the last value of key in env.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
