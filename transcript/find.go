package transcript

import (
	"cmp"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Session is one session log as `git liza logs` lists it.
type Session struct {
	N       int       `json:"n"`    // its number in the list, from 1 (oldest first)
	Path    string    `json:"path"` // the log file
	Header  Header    `json:"header"`
	End     *End      `json:"end,omitempty"` // nil while it runs, or when its supervisor died
	Last    time.Time `json:"last"`          // the time of its last record
	Summary Summary   `json:"summary"`
}

// Ext is the extension of a session log: NAME.jsonl under the sessions
// directory, in a directory per agent.
const Ext = ".jsonl"

// MaxSessions bounds how many session logs List reads: the newest are
// kept, as their names begin with the time they started.
const MaxSessions = 10000

// List reads the session logs under dir (<git common dir>/liza/logs/
// sessions): each agent's directory, each NAME.jsonl in it. A file that is
// no session log (an older plain .log, anything else) is passed over. The
// sessions come oldest first, by the time their headers say they started,
// and are numbered from 1. A missing dir is no session.
func List(dir string) ([]Session, error) {
	agents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, a := range agents {
		if !a.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, a.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if f.Type().IsRegular() && strings.HasSuffix(f.Name(), Ext) {
				paths = append(paths, filepath.Join(dir, a.Name(), f.Name()))
			}
		}
	}
	// The newest MaxSessions by name (a session's name begins with the
	// time it started).
	if len(paths) > MaxSessions {
		slices.SortFunc(paths, func(x, y string) int { return cmp.Compare(filepath.Base(x), filepath.Base(y)) })
		paths = paths[len(paths)-MaxSessions:]
	}
	var out []Session
	for _, p := range paths {
		s, err := Load(p)
		if err != nil {
			continue
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(x, y Session) int {
		return cmp.Or(x.Header.Started.Compare(y.Header.Started), cmp.Compare(x.Header.Agent, y.Header.Agent),
			cmp.Compare(x.Header.Session, y.Header.Session), cmp.Compare(x.Path, y.Path))
	})
	for i := range out {
		out[i].N = i + 1
	}
	return out, nil
}

// Load reads one session log as List shows it: its header, its end and
// the summary of its steps. It streams the file (Scan): a log of any size
// costs one pass and little memory.
func Load(path string) (Session, error) {
	s := Session{Path: path}
	h, err := scanSteps(path, nil, func(r Record, steps []Step) {
		if !r.T.IsZero() {
			s.Last = r.T
		}
		if r.End != nil {
			e := *r.End
			s.End = &e
		}
		for _, st := range steps {
			s.Summary.Add(st)
		}
	})
	s.Header = h
	if err != nil {
		return s, err
	}
	if s.Last.IsZero() {
		s.Last = h.Started
	}
	return s, nil
}

// EachStep streams the steps of the session log at path: start gets its
// header first, then fn each step, as the log's format parses them.
func EachStep(path string, start func(Header), fn func(Step)) error {
	_, err := scanSteps(path, func(h Header) { start(h) }, func(_ Record, steps []Step) {
		for _, st := range steps {
			fn(st)
		}
	})
	return err
}

// errHeaderRead stops the first pass of scanSteps.
var errHeaderRead = errors.New("header read")

// scanSteps streams the log at path, calling fn with each record after the
// header and the steps it holds, parsed in the header's format (start,
// when set, gets the header first): a first pass reads the header, the
// second the records.
func scanSteps(path string, start func(Header), fn func(Record, []Step)) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	h, err := Scan(f, func(Record) error { return errHeaderRead })
	if err != nil && err != errHeaderRead {
		return h, err
	}
	if start != nil {
		start(h)
	}
	if err == nil {
		return h, nil // a header alone
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return h, err
	}
	p := NewParser(h.Format)
	return Scan(f, func(r Record) error { fn(r, p.Record(r)); return nil })
}
