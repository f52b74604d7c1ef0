package refstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// A fetch of the board's refs (refs/liza/...) from a git daemon, made
// here rather than by git fetch, where the listing is (see
// daemonlist.go). The clone next in line on a busy hub fetches every
// turn; through git, each fetch was a git process, the relay, a
// connectivity check (git rev-list) and unpack-objects writing every
// object as a file of its own: four processes and a dozen files for a
// turn's twenty objects. Here it is the same connection as the listing:
// the refs, then the pack of what this repository lacks, which is read
// whole, every object named by its own content (an object cannot be
// passed off under another's id), checked to reach only objects the pack
// or this repository holds, and written as one pack (packread.go). The
// tracking refs then move as git fetch moves them, one by one, and the
// patterns' refs the remote no longer has go. Anything else (code, a
// version 0 server, a ref asked for by name that the remote lacks, a pack
// over its bounds, a partial clone) is fetched by git, as is what failed
// here before the refs moved.

// Bounds of a fetched pack: its bytes, its objects, and what its objects
// hold once inflated, together. The board's refs are small commits and
// trees (a state's trees are at most 32 MiB together, see trust.md).
const (
	daemonMaxPack    = 128 << 20
	daemonMaxObjects = 1 << 20
	daemonMaxUnpack  = 512 << 20
)

// fetchDaemon is Fetch from the git daemon t, for refs as Fetch takes
// them.
func (r *Repo) fetchDaemon(ctx context.Context, t daemonTarget, remote string, refs []string) (map[string]Hash, error) {
	ctx, cancel := context.WithTimeout(ctx, min(daemonTimeout, r.RemoteTimeout(false)))
	defer cancel()
	s, err := openDaemon(ctx, t, r.algo)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if s.v0 != nil {
		return nil, errors.New("a version 0 server")
	}
	listed, err := s.lsRefs(refs)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		if _, ok := listed[ref]; !ok && !strings.HasSuffix(ref, "/*") {
			return nil, fmt.Errorf("the remote has no %s", ref)
		}
	}
	// What the tracking refs hold now: the haves, and the old values of
	// their update.
	tracked := map[string]Hash{}
	for _, ref := range refs {
		if prefix, ok := strings.CutSuffix(ref, "*"); ok {
			under, err := r.RefsUnder(ctx, TrackingRef(remote, prefix))
			if err != nil {
				return nil, err
			}
			for name, h := range under {
				tracked[prefix+strings.TrimPrefix(name, TrackingRef(remote, prefix))] = h
			}
		} else if h, ok, err := r.ReadRef(TrackingRef(remote, ref)); err != nil {
			return nil, err
		} else if ok {
			tracked[ref] = h
		}
	}
	var wants, haves []Hash
	seen := map[Hash]bool{}
	for _, h := range listed {
		if !seen[h] && !r.odb.has(h) {
			seen[h] = true
			wants = append(wants, h)
		}
	}
	for _, h := range tracked {
		if !seen[h] && r.odb.has(h) {
			seen[h] = true
			haves = append(haves, h)
		}
	}
	if len(wants) > 0 {
		pack, err := s.fetchPack(wants, haves)
		if err != nil {
			return nil, err
		}
		if err := r.storeFetched(pack, wants); err != nil {
			return nil, err
		}
	}
	var updates []RefUpdate
	for name, h := range listed {
		if tracked[name] != h {
			updates = append(updates, RefUpdate{Name: TrackingRef(remote, name), Old: tracked[name], New: h})
		}
	}
	for name, h := range tracked {
		if _, ok := listed[name]; !ok {
			updates = append(updates, RefUpdate{Name: TrackingRef(remote, name), Old: h})
		}
	}
	if err := r.moveTracking(ctx, remote, updates); err != nil {
		return nil, err
	}
	got := map[string]Hash{}
	for _, ref := range refs {
		if h, ok := listed[ref]; ok {
			got[ref] = h
		}
	}
	return got, nil
}

// moveTracking moves tracking refs as updates say, one by one as git
// fetch moves them (not in one transaction): see MoveRefs.
func (r *Repo) moveTracking(ctx context.Context, remote string, updates []RefUpdate) error {
	return r.MoveRefs(ctx, "liza: fetch "+remote, Signature{Name: "git-liza", Email: "git-liza@liza.invalid"}, updates...)
}

// fetchPack asks for wants, saying it has haves, and returns the pack the
// server sends (protocol version 2's fetch command, with "done": no
// rounds of negotiation; no thin pack, so that every delta's base is in
// the pack or among the haves).
func (s *daemonSession) fetchPack(wants, haves []Hash) ([]byte, error) {
	var req bytes.Buffer
	pktWrite(&req, "command=fetch\n")
	pktWrite(&req, "object-format="+s.algo.String()+"\n")
	req.WriteString("0001")
	pktWrite(&req, "ofs-delta\n")
	pktWrite(&req, "no-progress\n")
	for _, h := range wants {
		pktWrite(&req, "want "+h.String()+"\n")
	}
	for _, h := range haves {
		pktWrite(&req, "have "+h.String()+"\n")
	}
	pktWrite(&req, "done\n")
	req.WriteString("0000")
	if _, err := s.conn.Write(req.Bytes()); err != nil {
		return nil, err
	}
	line, err := s.rd.next()
	if err != nil {
		return nil, err
	}
	if line != "packfile" {
		return nil, fmt.Errorf("the remote's answer starts with %q, not a packfile", line)
	}
	var pack []byte
	for {
		b, err := s.rd.raw()
		if err != nil {
			return nil, err
		}
		if b == nil {
			return pack, nil
		}
		if len(b) == 0 {
			continue
		}
		switch b[0] {
		case 1:
			if len(pack)+len(b)-1 > daemonMaxPack {
				return nil, fmt.Errorf("a pack over %d bytes", daemonMaxPack)
			}
			pack = append(pack, b[1:]...)
		case 2: // progress
		case 3:
			return nil, fmt.Errorf("the remote says: %s", strings.TrimSpace(string(b[1:])))
		default:
			return nil, fmt.Errorf("a packet on band %d", b[0])
		}
	}
}

// storeFetched reads pack, checks that what wants reach is here, and
// writes its objects as one pack of this repository.
func (r *Repo) storeFetched(pack []byte, wants []Hash) error {
	objs, err := r.readFetchedPack(pack)
	if err != nil {
		return err
	}
	byID := make(map[Hash]*fetchedObject, len(objs))
	for i := range objs {
		byID[objs[i].id] = &objs[i]
	}
	if err := r.checkFetched(byID, wants); err != nil {
		return err
	}
	ids := make([]Hash, len(objs))
	held := make([]heldObject, len(objs))
	for i, o := range objs {
		ids[i], held[i] = o.id, heldObject{t: o.t, data: o.data}
	}
	return r.odb.writePack(ids, held)
}

// checkFetched checks that every object wants reach is in objs or in
// this repository: a commit's tree and parents, a tree's entries (but
// submodules' commits), a tag's object.
func (r *Repo) checkFetched(objs map[Hash]*fetchedObject, wants []Hash) error {
	visited := map[Hash]bool{}
	stack := append([]Hash(nil), wants...)
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visited[id] {
			continue
		}
		visited[id] = true
		o, ok := objs[id]
		if !ok {
			if !r.odb.has(id) {
				return fmt.Errorf("object %s is neither in the pack nor here", id)
			}
			continue // here already, with what it reaches
		}
		next, err := r.reaches(o)
		if err != nil {
			return err
		}
		stack = append(stack, next...)
	}
	return nil
}

// reaches is what o names: a commit's tree and parents, a tree's entries
// but submodules' commits, a tag's object.
func (r *Repo) reaches(o *fetchedObject) ([]Hash, error) {
	var out []Hash
	switch o.t {
	case objCommit:
		header, _, _ := bytes.Cut(o.data, []byte("\n\n"))
		for _, line := range strings.Split(string(header), "\n") {
			k, v, _ := strings.Cut(line, " ")
			if k == "tree" || k == "parent" {
				h, ok := ParseHash(v)
				if !ok || h.algo() != r.algo {
					return nil, fmt.Errorf("commit %s names %q", o.id, v)
				}
				out = append(out, h)
			}
		}
	case objTag:
		header, _, _ := bytes.Cut(o.data, []byte("\n\n"))
		k, v, _ := strings.Cut(strings.SplitN(string(header), "\n", 2)[0], " ")
		h, ok := ParseHash(v)
		if k != "object" || !ok || h.algo() != r.algo {
			return nil, fmt.Errorf("tag %s names %q", o.id, v)
		}
		out = append(out, h)
	case objTree:
		entries, err := parseTree(o.id, o.data, r.algo)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Mode != "160000" {
				out = append(out, e.ID)
			}
		}
	}
	return out, nil
}
