package ops

// Claims that avoid collisions (issue 28): a claim of the best task
// prefers one whose declared paths hold none of the files the tasks in
// flight are changing on their branches. Declared paths already keep two
// tasks in flight apart (checkClaim); this sees the tasks that declare
// none, which may change anything. It costs nothing unless the task a
// claim would take declares paths and a branch in flight changes one of
// them: the branches are few (the in-flight window), and what each
// changes is kept in a small cache by commit ids, so a claim reads git
// only for branches that moved since the last one.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/liza-dev/git-liza/atomicfile"
	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

const (
	// maxAlternatives is how many other tasks a claim considers once its
	// first choice collides.
	maxAlternatives = 4
	// maxBranchFiles is how many changed files of one branch are read.
	maxBranchFiles = 1000
	// maxChangesCache bounds what is read of the cache.
	maxChangesCache = 4 << 20
)

// branchChanges is what a branch in flight changes since its base.
type branchChanges struct {
	task     string
	files    []string
	complete bool // false: it changes more files than listed
}

// pathsHold reports the first of paths that holds a file the branch
// changes, and the file. A branch whose list is incomplete may change
// anything. A task that declares no paths is not known to collide.
func pathsHold(paths contracts.StringList, b branchChanges) (string, string, bool) {
	for _, p := range paths {
		for _, f := range b.files {
			if contracts.PathMatches(p, f) {
				return p, f, true
			}
		}
		if !b.complete {
			return p, fmt.Sprintf("more than %d files", len(b.files)), true
		}
	}
	return "", "", false
}

// collision is a candidate's declared path that holds a file in flight.
type collision struct {
	pattern, file, by string
}

func collides(paths contracts.StringList, changing []branchChanges) *collision {
	for _, b := range changing {
		if p, f, ok := pathsHold(paths, b); ok {
			return &collision{p, f, b.task}
		}
	}
	return nil
}

// preferClear takes first, the best claimable task, unless its declared
// paths hold a file a branch in flight changes and one of the next few
// tasks in claim order is clear: that one is taken, and pick says why.
func (s *Service) preferClear(ctx context.Context, tx *cas.Tx, first string, skip map[string]bool) (string, string, error) {
	// Only the candidates and the tasks in flight are read (the claim
	// index), never the whole board's index: a claim costs the same on
	// any board. The first candidate's paths come from its file, which
	// the claim reads anyway when it keeps it (most often: a task that
	// declares no paths, or none in flight changing them), rather than
	// from its bucket's index line, which would cost another read.
	t, err := tx.Task(first)
	if err != nil {
		return first, "", err
	}
	if t == nil || len(t.Paths) == 0 {
		return first, "", nil
	}
	ft := t.Summary()
	inflight, err := tx.InFlight()
	if err != nil {
		return first, "", err
	}
	// The preference is advice: what cannot be read leaves the claim as
	// it was.
	changing, err := s.inFlightChanges(ctx, tx, inflight)
	if err != nil || len(changing) == 0 {
		return first, "", nil
	}
	hit := collides(ft.Paths, changing)
	if hit == nil {
		return first, "", nil
	}
	passed := map[string]bool{first: true}
	for id := range skip {
		passed[id] = true
	}
	for range maxAlternatives {
		next, _, err := bestClaim(tx, s.Agent, passed)
		if err != nil || next == "" {
			return first, "", err
		}
		nt, err := tx.Summary(next)
		if err != nil {
			return first, "", err
		}
		if nt != nil && collides(nt.Paths, changing) == nil {
			// Names and paths are the planner's, file names an agent's:
			// escaped for the terminal that shows them.
			return next, fmt.Sprintf("%s preferred to %s: %s's paths (%s) hold %s, which %s is changing",
				next, first, first, contracts.Printable(hit.pattern), contracts.Printable(hit.file), hit.by), nil
		}
		passed[next] = true
	}
	return first, "", nil
}

// inFlightChanges reads what each task in flight changes on its branch
// (here, or its reviewed commit), from the cache when the commits are the
// same. Each task's base and reviewed commits are taken from the cache
// too, by the object id of the task's file, so that a claim does not
// decode every task in flight.
func (s *Service) inFlightChanges(ctx context.Context, tx *cas.Tx, idx map[string]*contracts.TaskSummary) ([]branchChanges, error) {
	cache := s.readChangesCache()
	fresh := changesCache{Branches: map[string]changesEntry{}, Tasks: map[string]taskCommits{}}
	var out []branchChanges
	for _, sum := range idx {
		if !sum.Status.InFlight() {
			continue
		}
		commits, err := taskCommitsOf(tx, sum.ID, cache, fresh)
		if err != nil {
			return nil, err
		}
		base, ok := refstore.ParseHash(commits.Base)
		if !ok {
			continue
		}
		tip, ok, err := s.Repo.ReadRef(worktree.BranchRef(sum.ID))
		if err != nil {
			return nil, err
		}
		if !ok {
			if tip, ok = refstore.ParseHash(commits.Review); !ok || !s.Repo.HasObject(tip) {
				continue
			}
		}
		if tip == base {
			continue
		}
		key := base.String() + ".." + tip.String()
		e, ok := cache.Branches[key]
		if !ok {
			files, complete, err := s.Repo.ChangedFiles(ctx, base, tip, maxBranchFiles)
			if err != nil {
				// A branch git cannot read (objects gone) tells nothing.
				continue
			}
			e = changesEntry{Files: files, Complete: complete}
		}
		fresh.Branches[key] = e
		out = append(out, branchChanges{task: sum.ID, files: e.Files, complete: e.Complete})
	}
	if !sameKeys(fresh.Branches, cache.Branches) || !sameKeys(fresh.Tasks, cache.Tasks) {
		s.writeChangesCache(fresh)
	}
	return out, nil
}

// taskCommitsOf is a task's base and reviewed commits: from the cache
// when it holds the task's file as the state keeps it, else read from the
// task; kept in fresh either way.
func taskCommitsOf(tx *cas.Tx, id string, cache, fresh changesCache) (taskCommits, error) {
	file, known, err := tx.TaskFileID(id)
	if err != nil {
		return taskCommits{}, err
	}
	if c, ok := cache.Tasks[file.String()]; known && ok {
		fresh.Tasks[file.String()] = c
		return c, nil
	}
	t, err := tx.MustTask(id)
	if err != nil {
		return taskCommits{}, err
	}
	c := taskCommits{Base: t.BaseCommit, Review: t.ReviewCommit}
	if known {
		fresh.Tasks[file.String()] = c
	}
	return c, nil
}

// changesCache is the cache: what each branch changes, by its base and
// tip ("<base>..<tip>"), and each task's commits, by the object id of its
// file.
type changesCache struct {
	Branches map[string]changesEntry `json:"branches"`
	Tasks    map[string]taskCommits  `json:"tasks"`
}

// changesEntry is what a branch changes, as the cache keeps it.
type changesEntry struct {
	Files    []string `json:"files"`
	Complete bool     `json:"complete"`
}

// taskCommits is what a claim reads of a task in flight.
type taskCommits struct {
	Base   string `json:"base"`
	Review string `json:"review,omitempty"`
}

func (s *Service) changesCachePath() string {
	return filepath.Join(s.Repo.CommonDir, "liza", "cache", "changes.json")
}

// readChangesCache reads the cache, or nothing when it is missing, too
// large or unreadable. It only steers which task a claim prefers, so what
// an agent may write there misleads a preference and nothing else; the
// entries read are held to the same bounds as fresh ones.
func (s *Service) readChangesCache() changesCache {
	var c changesCache
	f, err := os.Open(s.changesCachePath())
	if err != nil {
		return c
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxChangesCache+1))
	if err != nil || len(b) > maxChangesCache || json.Unmarshal(b, &c) != nil {
		return changesCache{}
	}
	for k, e := range c.Branches {
		if len(e.Files) > maxBranchFiles {
			delete(c.Branches, k)
		}
	}
	return c
}

// writeChangesCache keeps the entries of the branches and tasks in flight
// now, and only those: the cache is as small as the window.
func (s *Service) writeChangesCache(c changesCache) {
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	p := s.changesCachePath()
	if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
		_ = atomicfile.Write(p, b, 0o644)
	}
}

func sameKeys[V any](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
