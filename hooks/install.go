package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/atomicfile"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

const stateRef = refstore.StateRef

// Kind says whose a hook file is.
type Kind string

// The kinds of hook file.
const (
	Ours    Kind = "ours"
	Foreign Kind = "foreign"
	Absent  Kind = "absent"
	// RunBy is a hook that is not ours but runs git-liza's handler, from
	// its own text or a hook manager's configuration (Status.Via).
	RunBy Kind = "run by"
)

// Status is one hook as found on disk.
type Status struct {
	Name string `json:"name"`
	Kind Kind   `json:"state"`
	// Chained names the foreign hook ours runs first, when there is one.
	Chained string `json:"chained,omitempty"`
	// Current is false for a hook of ours written by another version.
	Current bool `json:"current"`
	// Via names the file that runs git-liza's handler for a RunBy hook:
	// ".husky/pre-commit (husky)".
	Via string `json:"via,omitempty"`
}

func (s Status) String() string {
	switch {
	case s.Kind == Ours && s.Chained != "" && !s.Current:
		return fmt.Sprintf("ours chaining %s (outdated: run git liza hooks install)", s.Chained)
	case s.Kind == Ours && s.Chained != "":
		return "ours chaining " + s.Chained
	case s.Kind == Ours && !s.Current:
		return "ours (outdated: run git liza hooks install)"
	case s.Kind == RunBy:
		return "git-liza's handler, run by " + s.Via
	}
	return string(s.Kind)
}

// IsOurs reports whether a hook script carries our marker.
func IsOurs(content []byte) bool { return refstore.IsOwnHook(content) }

// inspect reads hook name.
func (l Location) inspect(name string) (Status, []byte, error) {
	st := Status{Name: name, Kind: Absent}
	b, err := os.ReadFile(l.Path(name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return st, nil, fmt.Errorf("reading hook %s: %w", l.display(name), err)
	case IsOurs(b):
		st.Kind = Ours
	default:
		st.Kind = Foreign
		if st.Via = l.runBy(name, b); st.Via != "" {
			st.Kind = RunBy
		}
	}
	chained := exists(l.Path(name + ChainSuffix))
	if chained && st.Kind == Ours {
		st.Chained = name + ChainSuffix
	}
	if st.Kind == Ours {
		st.Current = string(b) == l.Script(name, chained)
	}
	return st, b, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Status reports on each hook.
func (l Location) Status(names []string) ([]Status, error) {
	out := make([]Status, 0, len(names))
	for _, n := range names {
		st, _, err := l.inspect(n)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Change is what install or uninstall did to one hook.
type Change struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	// Chained names the hook kept beside ours (install) or put back in its
	// place (uninstall).
	Chained string `json:"chained,omitempty"`
	// Via names what runs git-liza's handler for a hook left to a hook
	// manager (install: RunByManager).
	Via string `json:"via,omitempty"`
}

// The actions reported.
const (
	Installed        = "installed"
	AlreadyInstalled = "already installed"
	Updated          = "updated"
	Removed          = "removed"
	LeftAlone        = "left alone"
	RunByManager     = "run by"
)

func (c Change) String() string {
	switch {
	case c.Action == Installed && c.Chained != "":
		return fmt.Sprintf("%s: installed, running the hook that was there (kept as %s) first", c.Name, c.Chained)
	case c.Action == Removed && c.Chained != "":
		return fmt.Sprintf("%s: removed, the hook it ran put back from %s", c.Name, c.Chained)
	case c.Action == LeftAlone:
		return c.Name + ": not git-liza's, left alone"
	case c.Action == RunByManager:
		return c.Name + ": left as it is: it runs git-liza's handler (" + c.Via + ")"
	}
	return c.Name + ": " + c.Action
}

// Install writes our scripts for names. A hook that is already ours and
// current is left untouched, so installing twice changes nothing; so is a
// hook that runs git-liza's handler itself (a hook manager's, see runBy).
// A hook that is not ours makes Install refuse before it writes anything,
// unless force is set: then the hook is kept as NAME.liza-chained and ours
// runs it first. A hook file git tracks is never edited, force or not, and
// a relative core.hooksPath is refused (see Location.Relative).
func (l Location) Install(names []string, force bool) ([]Change, error) {
	if w := l.RelativeWarning(); w != "" {
		return nil, contracts.Invalidf("%s", w)
	}
	type plan struct {
		name    string
		chain   bool // move the foreign hook aside first
		chained bool // write the chaining script
		action  string
		via     string
	}
	var plans []plan
	var foreign, clash, tracked []string
	var trackedNames map[string]bool
	for _, n := range names {
		st, _, err := l.inspect(n)
		if err != nil {
			return nil, err
		}
		hasChained := exists(l.Path(n + ChainSuffix))
		switch st.Kind {
		case Absent:
			plans = append(plans, plan{name: n, chained: hasChained, action: Installed})
		case Ours:
			action := AlreadyInstalled
			if !st.Current {
				action = Updated
			}
			plans = append(plans, plan{name: n, chained: hasChained, action: action})
		case RunBy:
			plans = append(plans, plan{name: n, action: RunByManager, via: st.Via})
		case Foreign:
			if trackedNames == nil {
				if trackedNames, err = l.tracked(context.Background(), names); err != nil {
					return nil, err
				}
			}
			switch {
			case trackedNames[n]:
				tracked = append(tracked, l.display(n))
			case !force:
				foreign = append(foreign, l.display(n))
			case hasChained:
				clash = append(clash, l.display(n))
			default:
				plans = append(plans, plan{name: n, chain: true, chained: true, action: Installed})
			}
		}
	}
	if len(tracked) > 0 {
		return nil, contracts.Invalidf("%s tracked by git, and git-liza does not edit tracked files: have %s run git-liza's handler (a line such as: git liza hook %s \"$@\"), then install again",
			listIs(tracked), itOrEach(tracked), filepath.Base(tracked[0]))
	}
	if len(clash) > 0 {
		return nil, contracts.Invalidf("%s not git-liza's, and %s%s already exists: move one of them away, then install again",
			listIs(clash), clash[0], ChainSuffix)
	}
	switch {
	case len(foreign) == 1:
		return nil, contracts.Invalidf("%s is not git-liza's: move it away, or pass --force to keep it as %s%s and run it before git-liza's",
			foreign[0], foreign[0], ChainSuffix)
	case len(foreign) > 1:
		return nil, contracts.Invalidf("%s are not git-liza's: move them away, or pass --force to keep each as NAME%s and run it before git-liza's",
			strings.Join(foreign, ", "), ChainSuffix)
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", l.Display, err)
	}
	var out []Change
	for _, p := range plans {
		if p.action != AlreadyInstalled && p.action != RunByManager {
			path := l.Path(p.name)
			if p.chain {
				if err := os.Rename(path, path+ChainSuffix); err != nil {
					return out, fmt.Errorf("keeping %s: %w", l.display(p.name), err)
				}
			}
			if err := writeExecutable(path, l.Script(p.name, p.chained)); err != nil {
				return out, err
			}
		}
		c := Change{Name: p.name, Action: p.action, Via: p.via}
		if p.chain {
			c.Chained = p.name + ChainSuffix
		}
		out = append(out, c)
	}
	return out, nil
}

// itOrEach is "it" or "each".
func itOrEach(files []string) string {
	if len(files) == 1 {
		return "it"
	}
	return "each"
}

// listIs is "A is" or "A, B are".
func listIs(files []string) string {
	if len(files) == 1 {
		return files[0] + " is"
	}
	return strings.Join(files, ", ") + " are"
}

// Uninstall removes our scripts for names and puts back the hooks they
// chained. Hooks that are not ours are left alone.
func (l Location) Uninstall(names []string) ([]Change, error) {
	var out []Change
	for _, n := range names {
		st, _, err := l.inspect(n)
		if err != nil {
			return out, err
		}
		path := l.Path(n)
		chained := path + ChainSuffix
		switch st.Kind {
		case Foreign, RunBy:
			out = append(out, Change{Name: n, Action: LeftAlone})
			continue
		case Ours:
			if err := os.Remove(path); err != nil {
				return out, fmt.Errorf("removing %s: %w", l.display(n), err)
			}
		}
		if exists(chained) {
			if err := os.Rename(chained, path); err != nil {
				return out, fmt.Errorf("restoring %s: %w", l.display(n), err)
			}
			out = append(out, Change{Name: n, Action: Removed, Chained: n + ChainSuffix})
		} else if st.Kind == Ours {
			out = append(out, Change{Name: n, Action: Removed})
		}
	}
	return out, nil
}

// writeExecutable replaces path with content, mode 0755, through a
// temporary file and a rename, so that git never runs half a script.
func writeExecutable(path, content string) error {
	if err := atomicfile.Write(path, []byte(content), 0o755); err != nil {
		return fmt.Errorf("writing hook %s: %w", path, err)
	}
	return nil
}

// MaxInputSize is the receive.maxInputSize that hooks install --server
// gives a bare repository that has none: git refuses a push whose pack is
// larger, before it stores it or runs any hook. The guard's own checks
// bound what it reads of a state commit whatever the push's size (see
// cas.MaxFile); this bounds what git spools to disk and indexes for a push
// before the guard refuses it. 256 MiB is far more than a push of state
// commits (a few KB each) or of an agent's task branch needs, and more
// than a host such as GitHub takes as one file (100 MB); a first push of
// a large project's history may need more, and an administrator raises it
// (hooks install never lowers a value that is set).
const MaxInputSize = "256m"

// inputKey is the setting MaxInputSize goes in.
const inputKey = "receive.maxInputSize"

// LimitInput sets receive.maxInputSize to MaxInputSize in repo's own
// config, unless it is set (at any level: an administrator's value, 0 for
// no limit included, is kept).
func LimitInput(ctx context.Context, repo *refstore.Repo) (Change, error) {
	c := Change{Name: inputKey}
	if v, ok := repo.Config(inputKey); ok {
		c.Action = "left at " + v + ", as set"
		if v == MaxInputSize {
			c.Action = "already " + v
		}
		return c, nil
	}
	if _, err := repo.Git(ctx, "config", "--local", inputKey, MaxInputSize); err != nil {
		return c, err
	}
	c.Action = "set to " + MaxInputSize + " (a larger push is refused; git config " + inputKey + " raises it)"
	return c, nil
}
