package cas

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Every commit git-liza writes was validated against a parent that was
// valid, so validity carries from commit to commit without re-reading the
// whole state. A tip that did not come that way (a state fetched from
// elsewhere, a ref moved by hand, a fresh clone) is validated in full once,
// then remembered here.
const validatedFile = "liza/validated"

// validatedKeep is how many recent commit ids the file remembers; losing
// one to a concurrent writer costs one full validation, never correctness.
const validatedKeep = 64

func (s *Store) validatedPath() string {
	return filepath.Join(s.Repo.CommonDir, validatedFile)
}

// KnownGood reports whether commit is one this repository has written or
// checked: its state is valid and, when a Verify hook is set, every commit
// up to it has been verified.
func (s *Store) KnownGood(commit refstore.Hash) bool { return s.knownValid(commit) }

// MarkGood remembers commit as checked (see KnownGood).
func (s *Store) MarkGood(commit refstore.Hash) { s.markValid(commit) }

func (s *Store) knownValid(commit refstore.Hash) bool {
	b, err := os.ReadFile(s.validatedPath())
	if err != nil {
		return false
	}
	return strings.Contains(string(b), commit.String())
}

// markValid remembers commit as validated. It appends one line (an append
// this small is atomic); once the file holds twice validatedKeep lines it
// is rewritten with the recent half, through a temporary file renamed into
// place, so readers never see a torn file.
func (s *Store) markValid(commit refstore.Hash) {
	path := s.validatedPath()
	line := commit.String() + "\n"
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		fi, serr := f.Stat()
		if serr == nil && fi.Size() < int64(2*validatedKeep*len(line)) {
			_, err = f.WriteString(line)
			f.Close()
			if err == nil {
				return
			}
		} else {
			f.Close()
		}
	}
	old, _ := os.ReadFile(path)
	lines := strings.Fields(string(old))
	if len(lines) >= validatedKeep {
		lines = lines[len(lines)-validatedKeep+1:]
	}
	lines = append(lines, commit.String())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o644) != nil {
		_ = os.Remove(tmp)
		return
	}
	if os.Rename(tmp, path) != nil {
		_ = os.Remove(tmp)
	}
}

// checkTip refuses to build on a state that git-liza did not write here
// unless every commit since the last one known good does what its recorded
// operation does (Store.Verify), and on a state that does not parse or
// validate. It returns the live tasks when the stored index does not match
// them, so that the operation rewrites it.
func (s *Store) checkTip(ctx context.Context, snap *Snapshot) ([]*contracts.Task, error) {
	if s.knownValid(snap.Commit) {
		return nil, nil
	}
	if s.Verify != nil {
		if err := s.Verify(ctx, snap.Commit); err != nil {
			return nil, err
		}
	}
	st, err := snap.Load()
	if err != nil {
		return nil, err
	}
	if err := problemsError(contracts.CodeInconsistent, "state at "+short(snap.Commit)+" is invalid", contracts.Validate(st)); err != nil {
		return nil, err
	}
	if b, ok, err := snap.ReadFile(IndexFile); err != nil {
		return nil, err
	} else if idx, derr := decodeIndex(b); !ok || derr != nil || !sameIndex(idx, buildIndex(st.Tasks)) {
		return st.Tasks, nil
	}
	s.markValid(snap.Commit)
	return nil, nil
}

// problemsError turns validation problems into one error line: the first
// problem and how many more there are.
func problemsError(code contracts.Code, prefix string, problems []contracts.Problem) error {
	if len(problems) == 0 {
		return nil
	}
	msg := problems[0].String()
	if prefix != "" {
		msg = prefix + ": " + msg
	}
	if len(problems) > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", len(problems)-1)
	}
	return contracts.Errorf(code, "%s", msg)
}
