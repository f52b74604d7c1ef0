package ops

import (
	"context"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// EntityDiff is what changed in one entity of the state between two
// commits: a task, an agent, an anomaly, ..., or the board's own settings
// (liza.yaml).
type EntityDiff struct {
	Kind   string                  `json:"kind"` // "task", "archived task", "agent", "board", ...
	ID     string                  `json:"id,omitempty"`
	Change string                  `json:"change"` // "added", "removed" or "changed"
	Fields []contracts.FieldChange `json:"fields"`
}

// StateDiff is what changed on the blackboard between two state commits.
type StateDiff struct {
	From     string       `json:"from"` // empty: the empty state
	To       string       `json:"to"`
	Entities []EntityDiff `json:"entities"`
}

// entityDirs are the directories of the state tree that hold one entity
// per file, with what to call their entities. The index and the request
// results are derived or internal, and left out.
var entityDirs = []struct{ dir, kind string }{
	{cas.TasksDir, "task"},
	{cas.ArchiveDir, "archived task"},
	{cas.AgentsDir, "agent"},
	{cas.HandoffDir, "handoff"},
	{cas.ListAnomalies, "anomaly"},
	{cas.ListDiscovered, "discovery"},
	{cas.ListHumanNotes, "human note"},
	{cas.ListSpecChanges, "spec change"},
	{cas.ListAlignment, "alignment"},
}

// Diff is what changed from state commit from (empty: the empty state) to
// state commit to (empty: the tip), entity by entity and field by field.
// It compares the two trees first, so it reads only the files that differ.
func (s *Service) Diff(ctx context.Context, from, to string) (*StateDiff, error) {
	b, err := s.Snapshot(ctx, to)
	if err != nil {
		return nil, err
	}
	a, err := cas.ReadSnapshot(s.Repo, refstore.Hash{})
	if err != nil {
		return nil, err
	}
	if from != "" {
		if a, err = s.Snapshot(ctx, from); err != nil {
			return nil, err
		}
	}
	entities, err := DiffSnapshots(a, b)
	if err != nil {
		return nil, err
	}
	d := &StateDiff{To: b.Commit.String(), Entities: entities}
	if a.Exists() {
		d.From = a.Commit.String()
	}
	return d, nil
}

// DiffSnapshots compares two states tree by tree: a file whose blob is the
// same in both is not read.
func DiffSnapshots(a, b *cas.Snapshot) ([]EntityDiff, error) {
	out, _, err := DiffSnapshotsMax(a, b, 0)
	return out, err
}

// DiffSnapshotsMax is DiffSnapshots of at most max entities (0: all),
// in the same order, and how many more changed: those are not read.
func DiffSnapshotsMax(a, b *cas.Snapshot, max int) ([]EntityDiff, int, error) {
	out, more := []EntityDiff{}, 0
	if same, err := cas.SameBoard(a, b); err != nil {
		return nil, 0, err
	} else if !same {
		old, hadOld, err := a.BoardFile()
		if err != nil {
			return nil, 0, err
		}
		cur, hasNew, err := b.BoardFile()
		if err != nil {
			return nil, 0, err
		}
		meta, err := diffBytes(old, cur, hadOld, hasNew, cas.MetaFile, "board", "")
		if err != nil {
			return nil, 0, err
		}
		if meta != nil {
			out = append(out, *meta)
		}
	}
	for _, d := range entityDirs {
		names, err := cas.Changed(a, b, d.dir)
		if err != nil {
			return nil, 0, err
		}
		for _, name := range names {
			if max > 0 && len(out) >= max {
				more++
				continue
			}
			ed, err := diffFile(a, b, d.dir+"/"+name, d.kind, strings.TrimSuffix(name, ".yaml"))
			if err != nil {
				return nil, 0, err
			}
			if ed != nil {
				out = append(out, *ed)
			}
		}
	}
	return out, more, nil
}

func diffFile(a, b *cas.Snapshot, path, kind, id string) (*EntityDiff, error) {
	old, hadOld, err := a.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cur, hasNew, err := b.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return diffBytes(old, cur, hadOld, hasNew, path, kind, id)
}

// diffBytes compares two versions of an entity file.
func diffBytes(old, cur []byte, hadOld, hasNew bool, path, kind, id string) (*EntityDiff, error) {
	if string(old) == string(cur) {
		return nil, nil
	}
	fields, err := contracts.DiffYAML(old, cur)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInconsistent, "state is inconsistent: %s: %v", path, err)
	}
	ed := &EntityDiff{Kind: kind, ID: strings.TrimLeft(id, "0"), Change: "changed", Fields: fields}
	if ed.ID == "" {
		ed.ID = id
	}
	switch {
	case !hadOld:
		ed.Change = "added"
	case !hasNew:
		ed.Change = "removed"
	}
	if ed.Fields == nil {
		ed.Fields = []contracts.FieldChange{}
	}
	return ed, nil
}

// reasonOf is the reason a state commit gives for what it did to task id:
// the reason of the newest history event it added (a rejection, a block,
// an integration failure, a rescope), or "".
func reasonOf(repo *refstore.Repo, c *refstore.Commit, id string) string {
	if id == "" {
		return ""
	}
	cur, err := cas.ReadSnapshot(repo, c.ID)
	if err != nil {
		return ""
	}
	t, err := cur.Task(id)
	if err != nil || t == nil || len(t.History) == 0 {
		return ""
	}
	before := 0
	if len(c.Parents) > 0 {
		if prev, err := cas.ReadSnapshot(repo, c.Parents[0]); err == nil {
			if p, err := prev.Task(id); err == nil && p != nil {
				before = len(p.History)
			}
		}
	}
	for i := len(t.History) - 1; i >= before; i-- {
		if e := t.History[i]; e != nil && e.Reason != "" {
			return e.Reason
		}
	}
	return ""
}
