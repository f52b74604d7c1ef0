package cas

// The claim queue in groups (rule set contracts.RulesQueueGroups on).
//
// Under RulesClaimIndex the queue was one directory of chunks of
// queueChunk lines: on a board of 50,000 UNCLAIMED tasks its tree has
// about 390 entries (38 KB) and a chunk 17 to 33 KB, and every operation
// that adds, claims or releases a task reads and writes both. Under
// RulesQueueGroups the chunks are smaller and sit in groups:
//
//	claims/queued/<group>/<chunk>
//
// A chunk holds groupChunk lines (cut in chunks of groupChunk when it grows
// past twice that), in the format of claims.go, and is named after a key
// no greater than any of its own and greater than every key before it, as
// there. A group holds queueGroup chunks (cut the same way past twice
// that); it is named after the first key of its first chunk when it is
// made, and the first group of a queue built whole is named "0", below
// every key, so that a key below every group's name goes to the first
// group without renaming it, or to a new group "0" when the first one has
// gone. An operation then reads and writes the top tree (about 50 groups
// at 50,000 tasks), one group's tree and the chunks it changes (4 to 8 KB
// each).
//
// The directory is another than RulesClaimIndex's claims/queue: the first
// operation under RulesQueueGroups on a board that keeps the flat queue
// writes the claim index whole, and every file of the flat queue goes.

import (
	"slices"
	"sort"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

const groupsDir = ClaimsDir + "/queued"

// groupChunk and queueGroup are the sizes above; tests make them small to
// cut chunks and groups often.
var groupChunk, queueGroup = 32, 32

const (
	// firstGroup names the first group of a queue built whole; no claim
	// key is below it (every key has a "." and a "!").
	firstGroup = "0"
)

// grouped reports whether the claim index of rule set rules keeps its
// queue in groups.
func grouped(rules int) bool { return rules >= contracts.RulesQueueGroups }

// groupedFiles adds to files the queue of the sorted entries q built
// whole, in groups.
func groupedFiles(files map[string][]byte, q []queueEntry) {
	for i, group := range runs(runs(q, groupChunk), queueGroup) {
		g := firstGroup
		if i > 0 {
			g = group[0][0].key
		}
		for _, c := range group {
			files[groupsDir+"/"+g+"/"+c[0].key] = encodeChunk(c)
		}
	}
}

// eachChunk calls fn with each chunk file of the queue s keeps (its path
// and blob), in claim order, in the shape of the rule set its commit was
// made under, until fn returns false.
func (s *Snapshot) eachChunk(fn func(path string, id refstore.Hash) (bool, error)) error {
	return s.walkQueue(grouped(s.rules), fn)
}

// walkQueue is eachChunk over the queue in one shape, flat or in groups,
// whatever the commit's rule set.
func (s *Snapshot) walkQueue(inGroups bool, fn func(path string, id refstore.Hash) (bool, error)) error {
	dirs := []string{queueDir}
	if inGroups {
		groups, err := s.Entries(groupsDir)
		if err != nil {
			return err
		}
		dirs = dirs[:0]
		for _, g := range groups {
			dirs = append(dirs, groupsDir+"/"+g.Name)
		}
	}
	for _, dir := range dirs {
		chunks, err := s.Entries(dir)
		if err != nil {
			return err
		}
		for _, c := range chunks {
			if more, err := fn(dir+"/"+c.Name, c.ID); err != nil || !more {
				return err
			}
		}
	}
	return nil
}

// queueFiles lists the files of the queue's both shapes that s keeps, for
// an operation that writes the queue whole to remove.
func (s *Snapshot) queueFiles() ([]string, error) {
	var out []string
	for _, inGroups := range []bool{false, true} {
		err := s.walkQueue(inGroups, func(path string, _ refstore.Hash) (bool, error) {
			out = append(out, path)
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// queueGroupState is one group an operation changes: its chunks' names
// and blobs as the parent has them, and the entries of those it changes
// (under "" the entries of a new chunk, in a group that has none).
type queueGroupState struct {
	names  []string
	blobs  map[string]refstore.Hash
	edited map[string][]queueEntry
}

// moveGrouped is moveQueue for a queue in groups.
func (tx *Tx) moveGrouped(files map[string][]byte, gone, come []queueEntry) error {
	groups, err := tx.Snap.Entries(groupsDir)
	if err != nil {
		return err
	}
	gnames := entryNames(groups)
	// groupOf is the group a key belongs in: the last whose name is not
	// above it, else the first group, "0", made anew when it has gone.
	groupOf := func(key string) string {
		if i := floorIndex(gnames, key); i >= 0 {
			return gnames[i]
		}
		return firstGroup
	}
	gs := map[string]*queueGroupState{}
	load := func(name string) (*queueGroupState, error) {
		if g, ok := gs[name]; ok {
			return g, nil
		}
		g := &queueGroupState{blobs: map[string]refstore.Hash{}, edited: map[string][]queueEntry{}}
		if _, found := slices.BinarySearch(gnames, name); found {
			chunks, err := tx.Snap.Entries(groupsDir + "/" + name)
			if err != nil {
				return nil, err
			}
			for _, c := range chunks {
				g.names = append(g.names, c.Name)
				g.blobs[c.Name] = c.ID
			}
		}
		gs[name] = g
		return g, nil
	}
	// at is the entries of the chunk of group gname a key belongs in: the
	// last chunk whose name is not above it, the first for a key below
	// them all, a new one in a group that has none.
	at := func(key string) (*queueGroupState, string, []queueEntry, error) {
		gname := groupOf(key)
		g, err := load(gname)
		if err != nil {
			return nil, "", nil, err
		}
		c := ""
		if len(g.names) > 0 {
			c = g.names[max(floorIndex(g.names, key), 0)]
		}
		if es, ok := g.edited[c]; ok {
			return g, c, es, nil
		}
		if c == "" {
			return g, c, nil, nil
		}
		path := groupsDir + "/" + gname + "/" + c
		raw, err := tx.Snap.readFile(path, g.blobs[c])
		if err != nil {
			return nil, "", nil, err
		}
		es, err := decodeChunk(raw)
		if err != nil {
			return nil, "", nil, inconsistent("%s: %v", path, err)
		}
		return g, c, es, nil
	}
	for _, e := range gone {
		g, c, es, err := at(e.key)
		if err != nil {
			return err
		}
		j := slices.IndexFunc(es, func(x queueEntry) bool { return x.key == e.key })
		if j < 0 {
			return inconsistent("%s: a task that leaves the claim queue is not in it", groupsDir)
		}
		g.edited[c] = slices.Delete(es, j, j+1)
	}
	for _, e := range come {
		g, c, es, err := at(e.key)
		if err != nil {
			return err
		}
		g.edited[c] = append(es, e)
	}
	for gname, g := range gs {
		if err := tx.writeGroup(files, gname, g); err != nil {
			return err
		}
	}
	return nil
}

// writeGroup adds to files what a group's changed chunks make: each chunk
// sorted, renamed after its first key when it took a key below its name,
// cut when it grew past twice groupChunk, gone when empty; and the group
// cut in groups of queueGroup chunks when it has more than twice that,
// each new group named after its first chunk and the chunks it takes
// moved there.
func (tx *Tx) writeGroup(files map[string][]byte, gname string, g *queueGroupState) error {
	after := map[string][]queueEntry{}
	rewritten := map[string]bool{}
	for c, es := range g.edited {
		slices.SortFunc(es, func(a, b queueEntry) int { return strings.Compare(a.key, b.key) })
		if c != "" {
			rewritten[c] = true
		}
		if len(es) == 0 {
			continue
		}
		name := c
		if name == "" || es[0].key < name {
			name = es[0].key
		}
		for k, part := range cut(es, groupChunk) {
			n := part[0].key
			if k == 0 {
				n = name
			}
			after[n] = part
		}
	}
	var names []string
	for _, n := range g.names {
		if _, ok := after[n]; !rewritten[n] && !ok {
			names = append(names, n)
		}
	}
	for n := range after {
		names = append(names, n)
	}
	slices.Sort(names)
	path := func(group, chunk string) string { return groupsDir + "/" + group + "/" + chunk }
	had := func(chunk string) bool {
		_, ok := g.blobs[chunk]
		return ok
	}
	for c := range rewritten {
		if _, ok := after[c]; !ok {
			files[path(gname, c)] = nil
		}
	}
	for k, part := range cut(names, queueGroup) {
		to := gname
		if k > 0 {
			to = part[0]
		}
		for _, n := range part {
			es, changed := after[n]
			switch {
			case changed:
				files[path(to, n)] = encodeChunk(es)
			case to != gname:
				// An unchanged chunk moving to a new group.
				raw, err := tx.Snap.readFile(path(gname, n), g.blobs[n])
				if err != nil {
					return err
				}
				files[path(to, n)] = raw
			}
			if to != gname && had(n) {
				files[path(gname, n)] = nil
			}
		}
	}
	return nil
}

// groupsMatch compares the queue in groups that snap keeps with want, the
// lines every live UNCLAIMED task makes in claim order: "" when they are
// the same and every group and chunk is named and filled as an operation
// leaves them, else the path that is not.
func groupsMatch(snap *Snapshot, want []byte) (string, error) {
	if flat, err := snap.Entries(queueDir); err != nil || len(flat) > 0 {
		return queueDir, err
	}
	groups, err := snap.Entries(groupsDir)
	if err != nil {
		return "", err
	}
	var got []byte
	last := "" // the last key before
	for _, g := range groups {
		dir := groupsDir + "/" + g.Name
		if !g.IsTree() || !validKey(g.Name) || last != "" && g.Name <= last {
			return dir, nil
		}
		chunks, err := snap.Entries(dir)
		if err != nil {
			return "", err
		}
		if len(chunks) == 0 || len(chunks) > 2*queueGroup {
			return dir, nil
		}
		for _, c := range chunks {
			p := dir + "/" + c.Name
			if c.IsTree() || !validKey(c.Name) || c.Name < g.Name || last != "" && c.Name <= last {
				return p, nil
			}
			raw, err := snap.readFile(p, c.ID)
			if err != nil {
				return "", err
			}
			es, err := decodeChunk(raw)
			if err != nil || len(es) == 0 || len(es) > 2*groupChunk || es[0].key < c.Name {
				return p, nil
			}
			last = es[len(es)-1].key
			got = append(got, raw[len(queueHeader)+1:]...)
		}
	}
	if string(got) != string(want) {
		return groupsDir, nil
	}
	return "", nil
}

// entryNames is the names of entries, in their order.
func entryNames(entries []refstore.TreeEntry) []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names
}

// floorIndex is the index of the last of the sorted names that is not
// above key, -1 for a key below them all.
func floorIndex(names []string, key string) int {
	i := sort.SearchStrings(names, key)
	if i < len(names) && names[i] == key {
		return i
	}
	return i - 1
}
