package agent

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/transcript"
)

// DefaultSessionLogsMax is how many bytes the session logs and saved
// prompts of a repository may take together when liza.sessionLogsMax is
// not set. Each log is capped (transcript.MaxLog), but a team left alone
// for days starts a session every few minutes, and an agent that floods
// its output fills a log to the cap every session: the oldest go first,
// as a system journal's do.
const DefaultSessionLogsMax = 4 << 30

// logsBusy is how recently a log must have been written to count as a
// session that may still be running, which is never removed.
const logsBusy = time.Hour

// SessionLogsMax is liza.sessionLogsMax (a size as git writes one: 500m,
// 4g, or bytes; 0 keeps every log), or DefaultSessionLogsMax. Only the
// user's own config is read (see refstore's protected keys): an agent that
// sets it in the repository's config cannot have the record of its
// sessions removed.
func SessionLogsMax(get func(string) (string, bool)) int64 {
	if v, ok := get("liza.sessionLogsMax"); ok {
		if n, ok := parseSize(v); ok {
			return n
		}
	}
	return DefaultSessionLogsMax
}

// parseSize reads a size as git does: a number, with k, m or g for 1024,
// 1024² or 1024³.
func parseSize(v string) (int64, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1<<10, v[:len(v)-1]
	case strings.HasSuffix(v, "m"):
		mult, v = 1<<20, v[:len(v)-1]
	case strings.HasSuffix(v, "g"):
		mult, v = 1<<30, v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, false
	}
	return n * mult, true
}

// logFile is one session's log, with the prompt saved under its name.
type logFile struct {
	path, prompt string
	name         string // the session's name: its start time first
	size         int64
	mod          time.Time
}

// PruneSessionLogs removes the oldest session logs under logDir (one
// directory per agent), each with its prompt under promptDir, until the
// logs and prompts take at most max bytes together. A log written in the
// last hour is kept whatever its age: its session may still be running.
// max 0 keeps everything. It returns how many sessions it removed and the
// bytes it freed.
func PruneSessionLogs(logDir, promptDir string, max int64, now time.Time) (removed int, freed int64) {
	if max <= 0 {
		return 0, 0
	}
	var logs []logFile
	var total int64
	agents, _ := os.ReadDir(logDir)
	for _, a := range agents {
		if !a.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(logDir, a.Name()))
		for _, f := range files {
			name, ok := strings.CutSuffix(f.Name(), transcript.Ext)
			if !ok || !f.Type().IsRegular() {
				continue
			}
			fi, err := f.Info()
			if err != nil {
				continue
			}
			l := logFile{path: filepath.Join(logDir, a.Name(), f.Name()), prompt: filepath.Join(promptDir, a.Name(), name+".md"),
				name: name, size: fi.Size(), mod: fi.ModTime()}
			if pi, err := os.Lstat(l.prompt); err == nil && pi.Mode().IsRegular() {
				l.size += pi.Size()
			} else {
				l.prompt = ""
			}
			total += l.size
			logs = append(logs, l)
		}
	}
	if total <= max {
		return 0, 0
	}
	slices.SortFunc(logs, func(x, y logFile) int { return cmp.Compare(x.name, y.name) })
	for _, l := range logs {
		if total <= max {
			break
		}
		if now.Sub(l.mod) < logsBusy {
			continue
		}
		if os.Remove(l.path) != nil {
			continue
		}
		if l.prompt != "" {
			os.Remove(l.prompt)
		}
		total -= l.size
		freed += l.size
		removed++
	}
	return removed, freed
}

// sessionLogDir is where the session logs are kept, one directory per
// agent.
func (s *sup) sessionLogDir() string {
	if s.LogDir != "" {
		return s.LogDir
	}
	return filepath.Join(s.Repo.CommonDir, filepath.FromSlash("liza/logs/sessions"))
}

// pruneLogs keeps the session logs and prompts within liza.sessionLogsMax
// as a session starts, saying what it removed, and, once, that a value the
// repository's config sets is not the one it follows.
func (s *sup) pruneLogs() {
	if v, ok := s.Repo.ConfigAnyScope("liza.sessionLogsMax"); ok && !s.toldLogsMax {
		if mine, set := s.Repo.Config("liza.sessionLogsMax"); !set || mine != v {
			s.toldLogsMax = true
			s.logf("liza.sessionLogsMax in this repository's config is ignored (an agent can write it): set it with git config --global")
		}
	}
	if n, freed := PruneSessionLogs(s.sessionLogDir(), s.PromptDir, SessionLogsMax(s.Repo.Config), time.Now()); n > 0 {
		s.logf("removed the %d oldest session logs and their prompts (%d MiB) to keep them within liza.sessionLogsMax", n, freed>>20)
	}
}
