package worktree

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/liza-dev/git-liza/refstore"
)

// kind is who made a worktree, told by where it lies.
type kind int

const (
	foreign     kind = iota // not git-liza's
	taskTree                // .worktrees/ID
	reviewTree              // liza/review/AGENT/ID in the common directory
	mergeTree               // liza/merge/NAME in the common directory
	legacyMerge             // $TMPDIR/liza-merge-*/tree, where merges ran their test before
)

func (k kind) throwaway() bool { return k == reviewTree || k == mergeTree || k == legacyMerge }

// entry is one registration in the common directory's worktrees/, read
// file by file as git writes it (git worktree add: the directory, locked,
// the worktree's directory, gitdir, the worktree's .git file, commondir,
// HEAD, then the checkout and its index), so that a registration a killed
// process left half made is seen for what it is.
type entry struct {
	name  string // the registration's directory name
	admin string // its absolute path
	// path is the worktree's directory, from gitdir; "" when gitdir is
	// missing or empty.
	path   string
	locked bool   // the locked file exists
	reason string // what it says
	// commondir is the file's content; commondirEmpty says the file
	// exists and is empty, which makes git die on every command that
	// looks at the worktrees ("failed to read .../commondir").
	commondir      string
	commondirEmpty bool
	head           string // HEAD's content, trimmed
	index          bool   // the checkout finished: index exists
	exists         bool   // path is a directory
	dotGit         bool   // path/.git exists
	kind           kind
	id             string // the task, for a task worktree
}

// headOK reports whether HEAD names a branch or a commit (git writes a
// null id first, and the branch or commit only once the registration is
// complete).
func (e *entry) headOK() bool {
	if strings.HasPrefix(e.head, "ref: refs/") {
		return true
	}
	h, ok := refstore.ParseHash(e.head)
	return ok && !h.IsZero()
}

// complete reports whether git finished making the worktree: registered,
// HEAD set and checked out.
func (e *entry) complete() bool {
	return e.path != "" && e.commondir != "" && e.headOK() && e.dotGit && e.index
}

// branch is the branch HEAD names ("task/ID"), or "" when detached.
func (e *entry) branch() string {
	ref, ok := strings.CutPrefix(e.head, "ref: ")
	if !ok {
		return ""
	}
	return strings.TrimPrefix(ref, "refs/heads/")
}

// display is the worktree's path for messages: relative to the main
// checkout when inside it.
func (e *entry) display(repo *refstore.Repo) string {
	if e.kind == taskTree {
		return Rel(e.id)
	}
	p := e.path
	if p == "" {
		p = e.admin
	}
	return displayPath(repo, p)
}

// displayPath is p relative to the main checkout when it lies inside it.
func displayPath(repo *refstore.Repo, p string) string {
	if root := repo.MainWorkTree(); root != "" {
		for _, r := range []string{root, realPath(root)} {
			if rel, err := filepath.Rel(r, p); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel)
			}
		}
	}
	return p
}

// realPath resolves symbolic links, as git does for the paths it records.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// resolver is realPath for the paths of many registrations, most of them
// in one directory: it resolves each directory once, and then looks only
// at whether the path itself is a link. Resolving every component of
// every path took six system calls a registration at every claim, review
// and merge.
type resolver map[string]string

func (r resolver) real(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return p // as realPath: what does not exist stays as it is
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return realPath(p)
	}
	dir, base := filepath.Split(filepath.Clean(p))
	d, ok := r[dir]
	if !ok {
		d = realPath(dir)
		r[dir] = d
	}
	return filepath.Join(d, base)
}

// areas are where git-liza's worktrees lie, each path also resolved.
type areas struct {
	tasks, review, merge, tmp []string
}

func areasOf(repo *refstore.Repo) areas {
	both := func(p string) []string {
		if r := realPath(p); r != p {
			return []string{p, r}
		}
		return []string{p}
	}
	a := areas{
		review: both(filepath.Join(repo.CommonDir, "liza", "review")),
		merge:  both(filepath.Join(repo.CommonDir, "liza", "merge")),
		tmp:    both(os.TempDir()),
	}
	if root := repo.MainWorkTree(); root != "" {
		a.tasks = both(filepath.Join(root, Dir))
		a.review = append(a.review, both(filepath.Join(root, Dir, reviewSubdir))...)
	}
	return a
}

// reviewSubdir is where reviewers' checkouts may lie beside the task
// worktrees (.worktrees/.review/AGENT/ID), out of the git directory, which
// agent sandboxes keep read-only to a session inside it. A name with a
// leading dot is no task id.
const reviewSubdir = ".review"

// classify says who made the worktree at path, and its task.
func (a areas) classify(path string) (kind, string) {
	under := func(dirs []string) (string, bool) {
		for _, d := range dirs {
			if rel, err := filepath.Rel(d, path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel), true
			}
		}
		return "", false
	}
	if _, ok := under(a.review); ok {
		return reviewTree, ""
	}
	if rel, ok := under(a.tasks); ok && !strings.Contains(rel, "/") {
		return taskTree, rel
	}
	if _, ok := under(a.merge); ok {
		return mergeTree, ""
	}
	if rel, ok := under(a.tmp); ok {
		if dir, rest, _ := strings.Cut(rel, "/"); strings.HasPrefix(dir, "liza-merge-") && rest == "tree" {
			return legacyMerge, ""
		}
	}
	return foreign, ""
}

// scan reads every registration (the caller holds lockRepo).
func scan(repo *refstore.Repo) ([]*entry, error) {
	dir := filepath.Join(repo.CommonDir, "worktrees")
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a := areasOf(repo)
	var out []*entry
	for _, de := range ents {
		if !de.IsDir() {
			continue
		}
		out = append(out, read(a, filepath.Join(dir, de.Name())))
	}
	return out, nil
}

// read reads one registration.
func read(a areas, admin string) *entry {
	e := &entry{name: filepath.Base(admin), admin: admin}
	file := func(name string) (string, bool) {
		b, ok := readSmall(filepath.Join(admin, name))
		return string(bytes.TrimSpace(b)), ok
	}
	if g, ok := gitdirIn(admin, "gitdir"); ok {
		e.path = filepath.Dir(g)
	}
	e.reason, e.locked = file("locked")
	var ok bool
	e.commondir, ok = file("commondir")
	e.commondirEmpty = ok && e.commondir == ""
	e.head, _ = file("HEAD")
	_, err := os.Lstat(filepath.Join(admin, "index")) // as big as the checkout: not read
	e.index = err == nil
	if e.path != "" {
		if fi, err := os.Stat(e.path); err == nil && fi.IsDir() {
			e.exists = true
		}
		if _, err := os.Lstat(filepath.Join(e.path, ".git")); err == nil {
			e.dotGit = true
		}
		e.kind, e.id = a.classify(e.path)
	} else if owner, ok := parseLock(e.reason); ok {
		// A registration killed before gitdir was written: its lock,
		// written first, says whose it is.
		e.kind, e.id = owner.kind, owner.task
	}
	return e
}

// review is the agent and task of a reviewer's checkout (AGENT/ID under a
// review area).
func (e *entry) review() (agent, task string, ok bool) {
	if e.kind != reviewTree || e.path == "" {
		return "", "", false
	}
	task = filepath.Base(e.path)
	agent = filepath.Base(filepath.Dir(e.path))
	return agent, task, task != "" && agent != ""
}

// info is what List reports of a task worktree's registration.
func (e *entry) info(repo *refstore.Repo) Info {
	// A registration git did not finish has no checkout to look at.
	w := Info{ID: e.id, Path: e.path, Exists: e.exists && e.dotGit && e.headOK() && e.commondir != "", Locked: e.reason, Prunable: !e.dotGit}
	if e.locked && w.Locked == "" {
		w.Locked = "locked"
	}
	if b := e.branch(); b != "" {
		w.Branch = b
		if h, ok, err := repo.ReadRef("refs/heads/" + b); err == nil && ok {
			w.Head = h.String()
		}
	} else if h, ok := refstore.ParseHash(e.head); ok && !h.IsZero() {
		w.Head = h.String()
	}
	return w
}
