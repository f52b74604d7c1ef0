package cas

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
//
// What is remembered is trusted: a commit id in the file is built on
// without a check. So the file does not live in the git directory, which
// an agent that commits can usually write, but in the state directory of
// the user git-liza runs as ($XDG_STATE_HOME/git-liza, else
// ~/.local/state/git-liza), one file per repository, which the agents'
// sandboxes do not let them write (an agent that runs as another user, or
// in a container, has its own). An agent whose sandbox cannot write it
// re-verifies what it reads; nothing is lost but a little time. Only
// where no home directory is known does it fall back to the git
// directory, as before.
//
// The file is kept per rule set (validatedName): a git-liza that knows an
// older set trusts what its file names, and must not find there a commit
// made under a newer set, which it cannot verify. Were the file shared, an
// older git-liza run in the same clone (a supervisor started before the
// upgrade, a downgrade) would build a commit of its older set on the newer
// one, which no history may hold ("older than its parent's"), and push it
// to a remote without the guard, where every clone then stops on it. This
// git-liza reads the files of the sets it knows, the older ones included:
// what a git-liza of an older set verified is valid under the set it was
// made under, and it never built on a newer one.
const validatedFile = "validated"

// validatedKeep is how many recent commit ids the file remembers; losing
// one to a concurrent writer costs one full validation, never correctness.
const validatedKeep = 64

// validatedName is the name of the file of the commits a git-liza whose
// newest rule set is rules verified: validatedFile up to rule set 7, which
// shared it, "validated-N" from rule set 8.
func validatedName(rules int) string {
	if rules < contracts.RulesSupervisorGone {
		return validatedFile
	}
	return fmt.Sprintf("%s-%d", validatedFile, rules)
}

func (s *Store) validatedPath() string {
	return filepath.Join(TrustDir(s.Repo.CommonDir), validatedName(contracts.Rules))
}

// TrustDir is the directory, outside the repository, where this user's
// git-liza keeps what it trusts of the repository whose common git
// directory is commonDir.
func TrustDir(commonDir string) string {
	base := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		base = ""
		if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
			base = filepath.Join(home, ".local", "state")
		}
	}
	if base == "" {
		return filepath.Join(commonDir, "liza")
	}
	abs, err := filepath.Abs(commonDir)
	if err != nil {
		abs = commonDir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(base, "git-liza", "repos", hex.EncodeToString(sum[:16]))
}

// KnownGood reports whether commit is one this repository has written or
// checked: its state is valid and, when a Verify hook is set, every commit
// up to it has been verified.
func (s *Store) KnownGood(commit refstore.Hash) bool { return s.knownValid(commit) }

// MarkGood remembers commit as checked (see KnownGood).
func (s *Store) MarkGood(commit refstore.Hash) { s.markValid(commit) }

func (s *Store) knownValid(commit refstore.Hash) bool {
	dir := TrustDir(s.Repo.CommonDir)
	for rules := contracts.Rules; rules >= contracts.RulesSupervisorGone-1; rules-- {
		b, err := refstore.ReadFile(filepath.Join(dir, validatedName(rules)))
		if err == nil && strings.Contains(string(b), commit.String()) {
			return true
		}
	}
	return false
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
	old, _ := refstore.ReadFile(path)
	lines := strings.Fields(string(old))
	if len(lines) >= validatedKeep {
		lines = lines[len(lines)-validatedKeep+1:]
	}
	lines = append(lines, commit.String())
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
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
// validate. It returns the tasks when the stored indexes do not match
// them, so that the operation rewrites them.
func (s *Store) checkTip(ctx context.Context, snap *Snapshot) (*Rebuild, error) {
	if s.knownValid(snap.Commit) {
		return nil, nil
	}
	if s.Verify != nil {
		if err := s.Verify(ctx, snap.Commit); err != nil {
			return nil, err
		}
		// Every commit verified is what a valid operation made of a state
		// that was valid, down to one known good, the first commit, or the
		// state at a shallow clone's boundary checked in full: the tip is
		// valid, its indexes included, without reading it whole.
		if s.knownValid(snap.Commit) {
			return nil, nil
		}
	}
	st, err := snap.Load()
	if err != nil {
		return nil, err
	}
	if err := problemsError(contracts.CodeInconsistent, "state at "+short(snap.Commit)+" is invalid", contracts.Validate(st)); err != nil {
		return nil, err
	}
	if !snap.v1 { // a layout 1 state is written anew, indexes and all
		rebuild, err := indexesMatch(snap, st)
		if err != nil || rebuild != nil {
			return rebuild, err
		}
	}
	s.markValid(snap.Commit)
	return nil, nil
}

// Trusted reports whether the state at commit, the tip of refs/liza/state,
// can be read from its indexes and what an operation changed: it is known
// good, or the commits since one that is (fetched, say) verify now. A
// state that does not (moved by hand, or checked nowhere) is read whole.
func (s *Store) Trusted(ctx context.Context, commit refstore.Hash) bool {
	if commit.IsZero() || s.knownValid(commit) {
		return !commit.IsZero()
	}
	if s.Verify == nil || s.Verify(ctx, commit) != nil {
		return false
	}
	return s.knownValid(commit)
}

// CheckState checks a whole state: its tree, its validity under the rule
// set its commit was made under, and its indexes, as a state whose history
// is not here (a shallow clone's boundary) is checked.
func CheckState(snap *Snapshot, rules int) error {
	st, err := snap.Load()
	if err != nil {
		return err
	}
	if err := problemsError(contracts.CodeInconsistent, "state at "+short(snap.Commit)+" is invalid", contracts.ValidateUnder(st, rules)); err != nil {
		return err
	}
	return IndexesMatch(snap, st)
}

// IndexesMatch checks that the indexes of a layout 2 state are what its
// tasks (st, as loaded) make.
func IndexesMatch(snap *Snapshot, st *contracts.State) error {
	if snap.v1 {
		return nil
	}
	if rb, err := indexesMatch(snap, st); err != nil {
		return err
	} else if rb != nil {
		return inconsistent("state at %s: its indexes do not match its tasks", short(snap.Commit))
	}
	return nil
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
