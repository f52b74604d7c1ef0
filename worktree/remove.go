package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/liza-dev/git-liza/proc"
	"github.com/liza-dev/git-liza/refstore"
)

// trashDir is where a worktree and its registration go, each by one
// rename, before they are deleted: a crash then leaves the whole worktree,
// or a registration whose directory is gone, or something in the trash,
// never a half-deleted checkout that git takes for one with uncommitted
// changes.
func trashDir(repo *refstore.Repo) string {
	return filepath.Join(repo.CommonDir, "liza", "trash")
}

// discard removes a worktree, its directory first and then its
// registration, each into the trash (the caller holds lockRepo, whose
// release empties the trash).
func discard(repo *refstore.Repo, e *entry) error {
	if e.path != "" {
		if err := toTrash(repo, e.path); err != nil {
			return err
		}
		removeEmptyReviewDirs(repo, e.path)
	}
	proc.CrashPoint("worktree:discard")
	return toTrash(repo, e.admin)
}

// removeEmptyReviewDirs removes the directories a review checkout at p
// was made in (.worktrees/.review/AGENT and .worktrees/.review, or
// liza/review/AGENT) once they are empty. A checkout being made meanwhile
// is not harmed: git makes the directories it lacks.
func removeEmptyReviewDirs(repo *refstore.Repo, p string) {
	tops := []string{filepath.Join(repo.CommonDir, "liza", "review")}
	if root := repo.MainWorkTree(); root != "" {
		tops = append(tops, filepath.Join(root, Dir, ReviewDir))
	}
	for _, top := range tops {
		if !strings.HasPrefix(p, top+string(filepath.Separator)) {
			continue
		}
		// The agent's directory, then the area itself.
		for d := filepath.Dir(p); strings.HasPrefix(d, top); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				return
			}
		}
	}
}

// forget removes a registration, and its worktree's directory unless
// keepDir; a kept directory loses its .git file, which would point at
// nothing.
func forget(repo *refstore.Repo, e *entry, keepDir bool) error {
	if !keepDir {
		return discard(repo, e)
	}
	if err := os.Remove(filepath.Join(e.path, ".git")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return toTrash(repo, e.admin)
}

// toTrash moves p into the trash. Where the trash is on another file
// system, p is deleted where it is, its .git file first so that what a
// crash leaves is no longer taken for a worktree.
func toTrash(repo *refstore.Repo, p string) error {
	dir := trashDir(repo)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dst := filepath.Join(dir, fmt.Sprintf("%s-%d-%x", filepath.Base(p), os.Getpid(), rand.Uint32()))
	err := os.Rename(p, dst)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.EXDEV):
		if err := os.Remove(filepath.Join(p, ".git")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return removeAll(p)
	}
	return err
}

// emptyTrash deletes what is in the trash. What it cannot delete now (a
// process still writes into it) stays for the next time. It needs no lock:
// what is in the trash is no worktree any more, and processes that empty
// it at once only share the work.
func emptyTrash(repo *refstore.Repo) error {
	ents, err := os.ReadDir(trashDir(repo))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := removeAll(filepath.Join(trashDir(repo), e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// leftByKilled reports whether the trash holds what a removal that no
// longer runs set aside. toTrash names each entry after the pid of the
// process that moved it; a process that still runs empties the trash
// itself once it has let the worktrees' lock go, and another command may
// take the lock before it has: what it set aside is not a killed
// removal's. An entry that names no pid (an older git-liza's) counts as
// left.
func leftByKilled(repo *refstore.Repo) bool {
	ents, _ := os.ReadDir(trashDir(repo))
	for _, e := range ents {
		if pid, ok := trashOwner(e.Name()); !ok || !proc.Running(pid) {
			return true
		}
	}
	return false
}

// trashOwner is the pid in the name toTrash gives an entry (BASE-PID-HEX).
func trashOwner(name string) (int, bool) {
	parts := strings.Split(name, "-")
	if len(parts) < 3 {
		return 0, false
	}
	digits, hex := parts[len(parts)-2], parts[len(parts)-1]
	pid, err := strconv.Atoi(digits)
	if hex == "" || strings.Trim(hex, "0123456789abcdef") != "" || err != nil || pid <= 0 || strconv.Itoa(pid) != digits {
		return 0, false
	}
	return pid, true
}

// removeAll is os.RemoveAll that also deletes read-only directories (a Go
// module cache that a test left in its worktree).
func removeAll(p string) error {
	err := os.RemoveAll(p)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o755)
		}
		return nil
	})
	return os.RemoveAll(p)
}
