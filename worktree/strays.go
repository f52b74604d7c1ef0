package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/refstore"
)

// Strays are the directories under .worktrees/ that no worktree is
// registered at: an empty one is removed; one with files is kept, with
// the command that removes it.
func Strays(repo *refstore.Repo) ([]Repair, error) {
	root := repo.MainWorkTree()
	if root == "" {
		return nil, nil
	}
	unlock, err := lockRepo(repo)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ents, err := os.ReadDir(filepath.Join(root, Dir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := scan(repo)
	if err != nil {
		return nil, err
	}
	registered := map[string]bool{}
	for _, e := range entries {
		if e.kind == taskTree {
			registered[e.id] = true
		}
	}
	var out []Repair
	for _, de := range ents {
		id := de.Name()
		// A name with a leading dot is no task's (.review holds reviewers'
		// checkouts, which Recover looks after).
		if !de.IsDir() || registered[id] || strings.HasPrefix(id, ".") {
			continue
		}
		p := filepath.Join(root, Dir, id)
		if sub, err := os.ReadDir(p); err == nil && len(sub) == 0 {
			if err := os.Remove(p); err != nil {
				return out, err
			}
			out = append(out, Repair{Path: Rel(id), ID: id, What: fmt.Sprintf("removed %s: an empty directory no worktree is registered at", Rel(id))})
			continue
		}
		out = append(out, Repair{Path: Rel(id), ID: id, What: fmt.Sprintf("%s is no registered worktree", Rel(id)),
			Fix: "if nothing in it is needed, rm -rf " + Rel(id)})
	}
	return out, nil
}

// strays are the directories in the throwaway areas (liza/merge/NAME,
// liza/review/AGENT/ID, .worktrees/.review/AGENT/ID) that no worktree is
// registered at.
func strays(repo *refstore.Repo, registered map[string]bool) ([]string, error) {
	var out []string
	check := func(dir string, depth int) error {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if !e.IsDir() {
				continue
			}
			if depth > 1 {
				sub, _ := os.ReadDir(p)
				if len(sub) == 0 {
					continue
				}
				for _, s := range sub {
					if q := filepath.Join(p, s.Name()); s.IsDir() && !registered[q] && !registered[realPath(q)] {
						out = append(out, q)
					}
				}
				continue
			}
			if !registered[p] && !registered[realPath(p)] {
				out = append(out, p)
			}
		}
		return nil
	}
	if err := check(filepath.Join(repo.CommonDir, "liza", "merge"), 1); err != nil {
		return nil, err
	}
	if root := repo.MainWorkTree(); root != "" {
		if err := check(filepath.Join(root, Dir, reviewSubdir), 2); err != nil {
			return nil, err
		}
	}
	return out, check(filepath.Join(repo.CommonDir, "liza", "review"), 2)
}
