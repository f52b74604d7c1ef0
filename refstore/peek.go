package refstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LocalRemote opens the repository of remote in place, read-only, when it
// is a directory on this machine that git reaches as it is: the remote's
// url is file:// or an absolute path, it has no pushurl, no url.*
// rewriting applies, and its storage is one git-liza reads itself (same
// object format, files ref backend). Its refs and objects can then be
// read without a fetch; ok is false otherwise, and the caller fetches.
func (r *Repo) LocalRemote(name string) (*Repo, bool) {
	url, ok := r.Config("remote." + name + ".url")
	if !ok {
		return nil, false
	}
	if _, push := r.Config("remote." + name + ".pushurl"); push || r.rewritesURLs() {
		return nil, false
	}
	path := strings.TrimPrefix(url, "file://")
	if strings.ContainsAny(path, "%?#") || !filepath.IsAbs(path) {
		return nil, false // a url of another transport, or one git would unescape
	}
	path = filepath.Clean(path)
	if !isGitDir(path) {
		if path = filepath.Join(path, ".git"); !isGitDir(path) {
			return nil, false
		}
	}
	if _, err := os.Stat(filepath.Join(path, "commondir")); err == nil {
		return nil, false // a linked worktree as a remote: not worth the care
	}
	format := readFormat(path)
	if format.foreign != "" || format.algo != r.algo {
		return nil, false
	}
	o := &Repo{GitDir: path, CommonDir: path}
	o.openObjects(format.algo, func() bool { return false })
	return o, true
}

// rewritesURLs reports whether any url.<base>.insteadOf or pushInsteadOf
// is configured: then git may reach a remote elsewhere than its url says.
func (r *Repo) rewritesURLs() bool {
	r.configOnce.Do(r.loadConfig)
	for _, e := range r.config {
		if strings.HasPrefix(e.Key, "url.") {
			return true
		}
	}
	for k := range configParameters() {
		if strings.HasPrefix(k, "url.") {
			return true
		}
	}
	return false
}

// inPlaceDepth bounds how many commits FetchInPlace walks back from a
// remote ref before it leaves the fetch to git.
const inPlaceDepth = 256

// FetchInPlace is Fetch from src, the repository of remote opened in place
// (LocalRemote), without git's fetch: it copies the objects this
// repository lacks of the remote's refs and sets their tracking refs, in
// one ref transaction. Refs are as Fetch takes them (exact names, or
// patterns ending in "/*"). It copies what each new commit changed
// against its parent, children before the trees and commits that name
// them, so that a kill leaves no object whose descendants are missing;
// the commits it stops at are the ones its tracking refs and local refs
// already name, complete by git's own rule. ok is false, with nothing
// moved, when a ref's history is not a line of single-parent commits back
// to one of those within inPlaceDepth: then the caller fetches with git.
//
// With track false it copies the objects and leaves the tracking refs
// where they are: an operation that builds on the remote's tip and pushes
// moves them itself when it lands, and one that waits for its turn needs
// only the objects.
func (r *Repo) FetchInPlace(ctx context.Context, src *Repo, remote string, track bool, refs ...string) (got map[string]Hash, ok bool, err error) {
	want := map[string]Hash{} // remote ref -> value on the remote
	tracked := map[string]Hash{}
	for _, ref := range refs {
		if prefix, pattern := strings.CutSuffix(ref, "*"); pattern {
			theirs, err := src.RefsUnder(ctx, prefix)
			if err != nil {
				return nil, false, err
			}
			maps.Copy(want, theirs)
			ours, err := r.RefsUnder(ctx, TrackingRef(remote, prefix))
			if err != nil {
				return nil, false, err
			}
			for name, h := range ours {
				tracked[prefix+strings.TrimPrefix(name, TrackingRef(remote, prefix))] = h
			}
			continue
		}
		h, has, err := src.ReadRef(ref)
		if err != nil {
			return nil, false, err
		}
		if has {
			want[ref] = h
		}
		if h, has, err := r.ReadRef(TrackingRef(remote, ref)); err != nil {
			return nil, false, err
		} else if has {
			tracked[ref] = h
		}
	}
	complete := map[Hash]bool{}
	for name, h := range tracked {
		complete[h] = true
		if local, has, err := r.ReadRef(name); err == nil && has {
			complete[local] = true
		}
	}
	var updates []RefUpdate
	for name, h := range want {
		if tracked[name] == h {
			continue
		}
		if ok, err := r.copyHistory(src, h, complete); err != nil || !ok {
			if errors.As(err, new(*TooLargeError)) {
				return nil, false, nil // git's fetch streams it
			}
			return nil, ok, err
		}
		complete[h] = true
		updates = append(updates, RefUpdate{Name: TrackingRef(remote, name), Old: tracked[name], New: h})
	}
	for name, h := range tracked {
		if _, kept := want[name]; !kept && inPattern(name, refs) {
			updates = append(updates, RefUpdate{Name: TrackingRef(remote, name), Old: h})
		}
	}
	if track && len(updates) > 0 {
		slices.SortFunc(updates, func(a, b RefUpdate) int { return strings.Compare(a.Name, b.Name) })
		if err := r.UpdateRefs(ctx, "liza: fetch "+remote+" in place", updates...); err != nil {
			if errors.Is(err, ErrStale) {
				return nil, false, nil // another process of this clone fetched: let git settle it
			}
			return nil, false, err
		}
	}
	got = map[string]Hash{}
	for _, ref := range refs {
		if h, has := want[ref]; has {
			got[ref] = h
		}
	}
	return got, true, nil
}

// inPattern reports whether name falls under one of the patterns in refs.
func inPattern(name string, refs []string) bool {
	for _, ref := range refs {
		if prefix, ok := strings.CutSuffix(ref, "*"); ok && strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// copyHistory copies the commits from tip back to one in complete, oldest
// first, each with what its tree changed against its parent's.
func (r *Repo) copyHistory(src *Repo, tip Hash, complete map[Hash]bool) (bool, error) {
	var line []*Commit
	for h := tip; !complete[h]; {
		if len(line) == inPlaceDepth {
			return false, nil
		}
		c, err := src.ReadCommit(h)
		if err != nil {
			return false, err
		}
		line = append(line, c)
		if len(c.Parents) != 1 {
			if len(c.Parents) > 1 {
				return false, nil
			}
			break // a root: copied whole
		}
		h = c.Parents[0]
	}
	for i := len(line) - 1; i >= 0; i-- {
		c := line[i]
		var base Hash
		switch {
		case i+1 < len(line):
			base = line[i+1].Tree // its parent, copied just before
		case len(c.Parents) == 1:
			p, err := r.ReadCommit(c.Parents[0]) // one complete here
			if err != nil {
				return false, err
			}
			base = p.Tree
		}
		if err := r.copyTree(src, c.Tree, base); err != nil {
			return false, err
		}
		if err := r.copyObject(src, c.ID, objCommit); err != nil {
			return false, err
		}
	}
	return true, nil
}

// copyTree copies tree from src, and what it holds that base (a complete
// tree here, or zero) does not, children first.
func (r *Repo) copyTree(src *Repo, tree, base Hash) error {
	if tree == base {
		return nil
	}
	entries, err := src.ReadTree(tree)
	if err != nil {
		return err
	}
	var old []TreeEntry
	if !base.IsZero() {
		if old, err = r.ReadTree(base); err != nil {
			return err
		}
	}
	for _, e := range entries {
		was, found := FindEntry(old, e.Name)
		switch {
		case found && was.ID == e.ID:
		case e.IsTree():
			var under Hash
			if found && was.IsTree() {
				under = was.ID
			}
			if err := r.copyTree(src, e.ID, under); err != nil {
				return err
			}
		case e.Mode == "160000":
			// A gitlink names a commit of another repository.
		case r.odb.hasLocal(e.ID):
			// A blob has no descendants: here is complete.
		default:
			if err := r.copyObject(src, e.ID, objBlob); err != nil {
				return err
			}
		}
	}
	return r.copyObject(src, tree, objTree)
}

// inPlaceMax bounds the objects FetchInPlace copies, each read whole:
// a larger one (nothing a blackboard holds) is left to git's fetch, and to
// whoever then reads it within a cap of their own.
const inPlaceMax = 64 << 20

// copyObject copies one object from src, checking that it is what its id
// says.
func (r *Repo) copyObject(src *Repo, id Hash, t objType) error {
	data, err := src.readObjectMax(id, t, inPlaceMax)
	if err != nil {
		return err
	}
	got, err := r.odb.write(t, data)
	if err != nil {
		return err
	}
	if got != id {
		return fmt.Errorf("object %s of the remote reads as %s", id, got)
	}
	return nil
}
