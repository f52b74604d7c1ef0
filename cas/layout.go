package cas

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
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

// entityDirs hold one <id>.yaml file per entity, lists one <n>.yaml file
// per entry.
var entityDirs = []string{TasksDir, ArchiveDir, AgentsDir, HandoffDir}

// checkTree refuses a state tree with entries the layout does not have: an
// unknown file or directory at the top, a file in an entity directory whose
// name is not a valid id (an id becomes a branch name and a directory, so
// "..", "x/y" or a name with a newline would be dangerous there), a list
// entry that is not a sequence number, or a directory where a file belongs.
// Such a tree is not one git-liza wrote, and would be carried on by every
// later commit.
func checkTree(s *Snapshot) error {
	root, err := s.Entries("")
	if err != nil {
		return err
	}
	for _, e := range root {
		switch {
		case e.Name == MetaFile || e.Name == IndexFile:
			if e.IsTree() || e.Mode != refstore.ModeFile {
				return inconsistent("state at %s: %s is not a file", short(s.Commit), e.Name)
			}
		case e.Name == RequestDir:
			if err := checkRequests(s); err != nil {
				return err
			}
		case slices.Contains(entityDirs, e.Name) || slices.Contains(lists, e.Name):
			if !e.IsTree() {
				return inconsistent("state at %s: %s is not a directory", short(s.Commit), e.Name)
			}
			list, err := s.Entries(e.Name)
			if err != nil {
				return err
			}
			for _, f := range list {
				id, ok := idOf(f.Name)
				valid := ok && f.Mode == refstore.ModeFile
				if valid && slices.Contains(lists, e.Name) {
					_, err := strconv.Atoi(id)
					valid = err == nil && len(id) == 6
				} else if valid {
					valid = contracts.ValidID(id) == nil
				}
				if !valid {
					return inconsistent("state at %s: %q in %s/ is not an entity file", short(s.Commit), f.Name, e.Name)
				}
			}
		default:
			return inconsistent("state at %s: unknown entry %q in the state tree", short(s.Commit), e.Name)
		}
	}
	return nil
}

// checkRequests checks requests/<xx>/<hash>.
func checkRequests(s *Snapshot) error {
	dirs, err := s.Entries(RequestDir)
	if err != nil {
		return err
	}
	hexName := func(n string, size int) bool {
		if len(n) != size {
			return false
		}
		for _, c := range n {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for _, d := range dirs {
		if !d.IsTree() || !hexName(d.Name, 2) {
			return inconsistent("state at %s: %q in %s/ is not a request directory", short(s.Commit), d.Name, RequestDir)
		}
		files, err := s.Entries(RequestDir + "/" + d.Name)
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.Mode != refstore.ModeFile || !hexName(f.Name, 38) {
				return inconsistent("state at %s: %q in %s/%s/ is not a request record", short(s.Commit), f.Name, RequestDir, d.Name)
			}
		}
	}
	return nil
}
