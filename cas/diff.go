package cas

import (
	"reflect"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Changed lists the entity files of a directory of the logical layout
// (tasks, archive, agents, handoff or a list) that differ between two
// states, by logical file name (<id>.yaml, <n>.yaml): those b has (added
// or changed) first, then those only a has. Two layout 2 trees are
// compared subtree by subtree, so only what differs is read.
func Changed(a, b *Snapshot, dir string) ([]string, error) {
	if a.v1 == b.v1 {
		// Trees of one layout that hold the same dir hold the same files.
		x, okx, err := a.entry(splitPath(dir))
		if err != nil {
			return nil, err
		}
		y, oky, err := b.entry(splitPath(dir))
		if err != nil {
			return nil, err
		}
		if okx == oky && x.ID == y.ID {
			return nil, nil
		}
	}
	if a.v1 || b.v1 {
		return changedEntities(a, b, dir)
	}
	var changed, removed []string
	var walk func(d string) error
	walk = func(d string) error {
		ea, err := a.Entries(d)
		if err != nil {
			return err
		}
		eb, err := b.Entries(d)
		if err != nil {
			return err
		}
		for _, y := range eb {
			x, ok := refstore.FindEntry(ea, y.Name)
			switch {
			case ok && x.ID == y.ID:
			case y.IsTree() && (!ok || x.IsTree()):
				if err := walk(d + "/" + y.Name); err != nil {
					return err
				}
			case !y.IsTree() && y.Name != IndexFile:
				changed = append(changed, y.Name)
			}
		}
		for _, x := range ea {
			y, ok := refstore.FindEntry(eb, x.Name)
			switch {
			case ok && (x.IsTree() == y.IsTree()):
			case x.IsTree():
				if err := gone(a, d+"/"+x.Name, &removed); err != nil {
					return err
				}
			case x.Name != IndexFile:
				removed = append(removed, x.Name)
			}
		}
		return nil
	}
	if err := walk(dir); err != nil {
		return nil, err
	}
	return append(changed, removed...), nil
}

// gone adds the entity files under d, which the other tree lacks.
func gone(s *Snapshot, d string, out *[]string) error {
	list, err := s.Entries(d)
	if err != nil {
		return err
	}
	for _, e := range list {
		if e.IsTree() {
			if err := gone(s, d+"/"+e.Name, out); err != nil {
				return err
			}
		} else if e.Name != IndexFile {
			*out = append(*out, e.Name)
		}
	}
	return nil
}

// changedEntities compares two trees of different layouts entity by
// entity.
func changedEntities(a, b *Snapshot, dir string) ([]string, error) {
	ea, err := a.entities(dir)
	if err != nil {
		return nil, err
	}
	eb, err := b.entities(dir)
	if err != nil {
		return nil, err
	}
	name := func(e entity) string { return e.id + ".yaml" }
	had := map[string]refstore.Hash{}
	for _, e := range ea {
		had[name(e)] = e.blob
	}
	var out []string
	for _, e := range eb {
		if id, ok := had[name(e)]; !ok || id != e.blob {
			out = append(out, name(e))
		}
		delete(had, name(e))
	}
	for _, e := range ea {
		if _, ok := had[name(e)]; ok {
			out = append(out, name(e))
		}
	}
	return out, nil
}

// BoardFile is liza.yaml as a person reads it: with the planned ids, which
// layout 2 keeps in planned/. It reports whether the state has one.
func (s *Snapshot) BoardFile() ([]byte, bool, error) {
	b, ok, err := s.ReadFile(MetaFile)
	if err != nil || !ok || s.v1 {
		return b, ok, err
	}
	planned, err := s.Planned()
	if err != nil || len(planned) == 0 {
		return b, ok, err
	}
	var m Meta
	if err := contracts.DecodeYAML(b, &m); err != nil {
		return nil, true, inconsistent("%s at %s: %v", MetaFile, short(s.Commit), err)
	}
	m.Sprint.Scope.Planned = planned
	out, err := contracts.EncodeYAML(&m)
	return out, true, err
}

// SameBoard reports whether two states have the same liza.yaml and planned
// ids, without reading either when their trees say so.
func SameBoard(a, b *Snapshot) (bool, error) {
	for _, name := range []string{MetaFile, PlannedDir} {
		x, okx, err := a.entry("", name)
		if err != nil {
			return false, err
		}
		y, oky, err := b.entry("", name)
		if err != nil {
			return false, err
		}
		if okx != oky || x.ID != y.ID {
			return false, nil
		}
	}
	return true, nil
}

// SameButMetrics reports whether liza.yaml says the same at a and b but
// for the sprint's metrics, which every merge recomputes: a supervisor
// that waits for its own work need not read the board at every merge.
func SameButMetrics(a, b *Snapshot) (bool, error) {
	x, err := a.meta()
	if err != nil {
		return false, err
	}
	y, err := b.meta()
	if err != nil {
		return false, err
	}
	x.Sprint.Metrics, y.Sprint.Metrics = nil, nil
	return reflect.DeepEqual(x, y), nil
}
