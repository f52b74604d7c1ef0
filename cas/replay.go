package cas

import (
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Replay applies op to the state at parent at time now, as build does for a
// live write, and returns the tree and commit message it makes and the
// other refs it moves; the new objects are written, nothing is committed.
// A commit whose recorded operation replays to its own tree and message is
// exactly what that operation makes of its parent. rebuild is as for build
// (see RebuildIndex). A request whose id the parent has already recorded
// makes no commit, so replaying one is an error.
func (s *Store) Replay(parent *Snapshot, op Op, now time.Time, rebuild *Rebuild) (refstore.Hash, string, []refstore.RefUpdate, error) {
	b, err := s.build(parent, op, now, rebuild)
	if err != nil {
		return refstore.Hash{}, "", nil, err
	}
	if b.replayed {
		return refstore.Hash{}, "", nil, contracts.Invalidf("request %s had already been applied: it makes no new commit", op.Request)
	}
	return b.tree, b.msg, b.refs, nil
}

// RebuildIndex reports whether an operation on snap rewrites its indexes
// whole (the stored ones do not match the tasks), and with which tasks. A
// layout 1 state is written anew in layout 2 anyway, indexes and all.
func RebuildIndex(snap *Snapshot) (*Rebuild, error) {
	if snap.v1 {
		return nil, nil
	}
	st, err := snap.Load()
	if err != nil {
		return nil, err
	}
	return indexesMatch(snap, st)
}

// indexesMatch compares the stored indexes of tasks/ and archive/, and
// the claim index, with what st's tasks make; on a difference it returns
// the tasks to rebuild them from.
func indexesMatch(snap *Snapshot, st *contracts.State) (*Rebuild, error) {
	for dir, tasks := range map[string][]*contracts.Task{TasksDir: st.Tasks, ArchiveDir: st.Archive} {
		want := shards(tasks)
		for _, b := range buckets {
			e, ok, err := snap.entry(dir+"/"+b, IndexFile)
			if err != nil {
				return nil, err
			}
			w, has := want[b]
			if !ok || !has {
				if ok != has {
					return &Rebuild{Tasks: st.Tasks, Archive: st.Archive}, nil
				}
				continue
			}
			got, err := snap.Repo.ReadBlob(e.ID)
			if err != nil {
				return nil, err
			}
			if string(got) != string(w) {
				return &Rebuild{Tasks: st.Tasks, Archive: st.Archive}, nil
			}
		}
	}
	if differs, err := claimsMatch(snap, st.Tasks); err != nil || differs != "" {
		if err != nil {
			return nil, err
		}
		return &Rebuild{Tasks: st.Tasks, Archive: st.Archive}, nil
	}
	return nil, nil
}

// migrate writes a layout 1 state anew in layout 2 (its request records
// unchanged, at their new places) and opens that tree as if snap's commit
// held it. Nothing is committed: the operation that builds on it does.
func (s *Store) migrate(snap *Snapshot) (*Snapshot, error) {
	st, err := snap.Load()
	if err != nil {
		return nil, err
	}
	files, err := splitState(st)
	if err != nil {
		return nil, err
	}
	dirs, err := snap.Entries(RequestDir)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		records, err := snap.Entries(RequestDir + "/" + d.Name)
		if err != nil {
			return nil, err
		}
		for _, r := range records {
			b, err := s.Repo.ReadBlob(r.ID)
			if err != nil {
				return nil, inconsistent("reading request record %s: %v", r.Name, err)
			}
			files[locate2(RequestDir+"/"+d.Name+"/"+r.Name)] = b
		}
	}
	empty := &Snapshot{Repo: s.Repo, dirs: map[string][]refstore.TreeEntry{"": nil}}
	tree, err := applyFiles(empty, "", files)
	if err != nil {
		return nil, err
	}
	return treeSnapshot(s.Repo, snap.Commit, tree)
}
