package cas

import (
	"fmt"
	"sort"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// The tree at refs/liza/state holds one file per entity, so that an
// operation reads and writes only what it touches:
//
//	liza.yaml                   version, goal, config, sprint, control, circuit_breaker
//	index                       one line per live task (see IndexFile)
//	tasks/<id>.yaml             live tasks
//	archive/<id>.yaml           archived (terminal) tasks
//	agents/<id>.yaml            agents
//	handoff/<task-id>.yaml      context-exhaustion handoffs
//	alignment_history/<n>.yaml  goal.alignment_history, one entry each
//	anomalies/<n>.yaml          anomalies, one entry each
//	discovered/<n>.yaml         discoveries
//	human_notes/<n>.yaml        human notes
//	spec_changes/<n>.yaml       spec changes
//	requests/<xx>/<hash>        results of requests made with --request-id
//
// <n> is a zero-padded sequence number, so tree order is list order.
const (
	MetaFile   = "liza.yaml"
	TasksDir   = "tasks"
	ArchiveDir = "archive"
	AgentsDir  = "agents"
	HandoffDir = "handoff"
	RequestDir = "requests"
)

// Lists are the append-only sections stored one entry per file.
const (
	ListAlignment   = "alignment_history"
	ListAnomalies   = "anomalies"
	ListDiscovered  = "discovered"
	ListHumanNotes  = "human_notes"
	ListSpecChanges = "spec_changes"
)

var lists = []string{ListAlignment, ListAnomalies, ListDiscovered, ListHumanNotes, ListSpecChanges}

// Meta is liza.yaml: the parts of the state that are not collections.
type Meta struct {
	Version        int                       `yaml:"version"`
	Goal           contracts.Goal            `yaml:"goal"`
	Config         contracts.Config          `yaml:"config"`
	Sprint         contracts.Sprint          `yaml:"sprint"`
	Control        *contracts.Control        `yaml:"control,omitempty"`
	CircuitBreaker *contracts.CircuitBreaker `yaml:"circuit_breaker,omitempty"`
	Extra          contracts.Extra           `yaml:",inline"`
}

func entityPath(dir, id string) string { return dir + "/" + id + ".yaml" }

func seqName(n int) string { return fmt.Sprintf("%06d.yaml", n) }

// idOf strips ".yaml" from an entity file name.
func idOf(name string) (string, bool) {
	return strings.CutSuffix(name, ".yaml")
}

// SortTasks puts tasks in board order: oldest first, then natural id order,
// so that a state imported from a seed file exports in its own order.
func SortTasks(ts []*contracts.Task) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if a.Created != b.Created {
			return a.Created < b.Created
		}
		return contracts.NaturalLess(a.ID, b.ID)
	})
}

// splitState cuts a whole state into the files of the tree.
func splitState(s *contracts.State) (map[string][]byte, error) {
	files := map[string][]byte{}
	put := func(path string, v any) error {
		b, err := contracts.EncodeYAML(v)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", path, err)
		}
		files[path] = b
		return nil
	}
	meta := Meta{
		Version: s.Version, Goal: s.Goal, Config: s.Config, Sprint: s.Sprint,
		Control: s.Control, CircuitBreaker: s.CircuitBreaker, Extra: s.Extra,
	}
	meta.Goal.AlignmentHistory = nil
	if err := put(MetaFile, &meta); err != nil {
		return nil, err
	}
	for _, t := range s.Tasks {
		if err := put(entityPath(TasksDir, t.ID), t); err != nil {
			return nil, err
		}
	}
	files[IndexFile] = encodeIndex(buildIndex(s.Tasks))
	for _, t := range s.Archive {
		if err := put(entityPath(ArchiveDir, t.ID), t); err != nil {
			return nil, err
		}
	}
	for id, a := range s.Agents {
		if err := put(entityPath(AgentsDir, id), a); err != nil {
			return nil, err
		}
	}
	for id, h := range s.Handoff {
		if err := put(entityPath(HandoffDir, id), h); err != nil {
			return nil, err
		}
	}
	appendAll := func(list string, n int, at func(i int) any) error {
		for i := 0; i < n; i++ {
			if err := put(list+"/"+seqName(i+1), at(i)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, err := range []error{
		appendAll(ListAlignment, len(s.Goal.AlignmentHistory), func(i int) any { return s.Goal.AlignmentHistory[i] }),
		appendAll(ListAnomalies, len(s.Anomalies), func(i int) any { return s.Anomalies[i] }),
		appendAll(ListDiscovered, len(s.Discovered), func(i int) any { return s.Discovered[i] }),
		appendAll(ListHumanNotes, len(s.HumanNotes), func(i int) any { return s.HumanNotes[i] }),
		appendAll(ListSpecChanges, len(s.SpecChanges), func(i int) any { return s.SpecChanges[i] }),
	} {
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}
