package refstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Partial and shallow clones: repositories that lack objects on purpose.

// promisorRemote is the remote a partial clone fetches what it lacks
// from: extensions.partialClone, else the first remote with promisor =
// true (how git 2.39 records a `clone --filter`).
func (r *Repo) promisorRemote() string {
	if v, ok := r.Config("extensions.partialclone"); ok && v != "" {
		return v
	}
	for _, e := range r.config {
		if name, ok := strings.CutPrefix(e.Key, "remote."); ok {
			if name, ok := strings.CutSuffix(name, ".promisor"); ok && configBool(e.Value) {
				return name
			}
		}
	}
	return ""
}

// promisor reports whether objects may be missing here because a promisor
// remote holds them (a partial clone).
func (r *Repo) promisor() bool { return r.promisorRemote() != "" }

// fillPartialClone fetches, in one round trip, every object of the
// blackboard's history that this partial clone lacks: what a plain
// `git fetch` of refs/liza/state left out under the clone's filter. git
// would fetch each object on its own as it is read, a round trip per
// object. Trees a filter left out hide what lies below them, so it looks
// again after each fetch, a few times at most. Failures are left to the
// readers, which fetch object by object.
func (r *Repo) fillPartialClone() {
	remote := r.promisorRemote()
	if remote == "" || strings.HasPrefix(remote, "-") {
		return
	}
	var tips []string
	for _, ref := range r.stateRefs() {
		if h, ok, err := r.ReadRef(ref); err == nil && ok {
			tips = append(tips, h.String())
		}
	}
	if len(tips) == 0 {
		return
	}
	ctx := context.Background()
	for range 5 {
		out, err := r.Git(ctx, append([]string{"rev-list", "--objects", "--missing=print"}, tips...)...)
		if err != nil {
			return
		}
		var missing bytes.Buffer
		for _, line := range strings.Split(string(out), "\n") {
			if id, ok := strings.CutPrefix(line, "?"); ok {
				missing.WriteString(id + "\n")
			}
		}
		if missing.Len() == 0 {
			return
		}
		// What git itself runs to fetch missing objects: each id a want,
		// no negotiation, and the filter so that a tree comes without
		// the blobs below it that are not asked for.
		if _, err := r.remoteGit(ctx, remote, true, missing.Bytes(), "-c", "fetch.negotiationAlgorithm=noop",
			"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no",
			"--no-auto-maintenance", "--filter=blob:none", r.PackProgram(remote, false), "--stdin", remote); err != nil {
			return
		}
	}
}

// stateRefs names the refs that hold the blackboard's history here: the
// state and what each remote was last seen to have.
func (r *Repo) stateRefs() []string {
	refs := []string{StateRef}
	r.configOnce.Do(r.loadConfig)
	seen := map[string]bool{}
	for _, e := range r.config {
		if name, ok := strings.CutPrefix(e.Key, "remote."); ok {
			if name, ok := strings.CutSuffix(name, ".url"); ok && !seen[name] && validRefPath("refs/"+name) {
				seen[name] = true
				refs = append(refs, TrackingRef(name, StateRef))
			}
		}
	}
	return refs
}

// Shallow returns the commits at the shallow boundary of a shallow clone
// (the file `shallow` in the git directory): their parents are not here.
// It is empty in a complete repository.
func (r *Repo) Shallow() (map[Hash]bool, error) {
	if r.plumbing != "" {
		return r.shallowThroughGit()
	}
	b, err := ReadFile(filepath.Join(r.CommonDir, "shallow"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading shallow: %w", err)
	}
	return parseShallow(b)
}

// shallowThroughGit asks git where the shallow file is.
func (r *Repo) shallowThroughGit() (map[Hash]bool, error) {
	out, err := r.Git(context.Background(), "rev-parse", "--is-shallow-repository", "--git-path", "shallow")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] != "true" {
		return nil, nil
	}
	b, err := ReadFile(absFrom(r.Dir(), lines[1]))
	if err != nil {
		return nil, fmt.Errorf("reading shallow: %w", err)
	}
	return parseShallow(b)
}

func parseShallow(b []byte) (map[Hash]bool, error) {
	out := map[Hash]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		h, ok := ParseHash(line)
		if !ok {
			return nil, fmt.Errorf("reading shallow: %q is not an object id", line)
		}
		out[h] = true
	}
	return out, sc.Err()
}
