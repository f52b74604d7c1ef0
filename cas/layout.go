package cas

import (
	"cmp"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// The tree at refs/liza/state holds one file per entity, spread so that an
// operation writes objects in proportion to what it changes, not to the
// size of the board (layout 2):
//
//	layout                      "2": the version of this layout
//	liza.yaml                   version, goal, config, sprint, control, circuit_breaker
//	tasks/<x>/<y>/<id>.yaml     live tasks, <x><y> the first two hex digits of sha1(<id>)
//	tasks/<x>/<y>/index         one line per task of that directory (see index.go)
//	archive/<x>/<y>/<id>.yaml   archived (terminal) tasks
//	archive/<x>/<y>/index       as tasks/<x>/<y>/index
//	planned/<c>/<cc>            sprint.scope.planned, 64 ids a file, one per line
//	agents/<id>.yaml            agents
//	handoff/<task-id>.yaml      context-exhaustion handoffs
//	alignment_history/<c>/<cc>/<n>.yaml  goal.alignment_history, one entry each
//	anomalies/<c>/<cc>/<n>.yaml          anomalies, one entry each
//	discovered/<c>/<cc>/<n>.yaml         discoveries
//	human_notes/<c>/<cc>/<n>.yaml        human notes
//	spec_changes/<c>/<cc>/<n>.yaml       spec changes
//	requests/<x>/<y>/<hash>     results of requests made with --request-id
//	claims/inflight, claims/queued/<group>/<key>  the claim index (see claims.go,
//	                            claims_groups.go; claims/queue/<key> under rule set 5)
//
// <n> is an entry's 1-based position in its list, zero-padded to six
// digits; <c>/<cc> are (n-1)/4096 and (n-1)/64 mod 64, zero-padded to three
// and two digits, so that a directory holds at most 64 entries and an
// append rewrites three small trees. The planned ids are cut the same way,
// 64 to a file. Lists, the plan and the archive only grow; the live tasks'
// directories stay as full as the board.
//
// Layout 1, which boards written before layout 2 have, kept each
// collection in one flat directory (tasks/<id>.yaml, <list>/<n>.yaml,
// requests/<xx>/<hash>), the index of live tasks in one root file, and
// the planned ids in liza.yaml. Both are read; the first operation on a
// layout 1 board writes it anew in layout 2 (see migrate).
const (
	LayoutFile = "layout"
	MetaFile   = "liza.yaml"
	TasksDir   = "tasks"
	ArchiveDir = "archive"
	PlannedDir = "planned"
	AgentsDir  = "agents"
	HandoffDir = "handoff"
	RequestDir = "requests"
)

// layoutV2 is the content of the layout file.
const layoutV2 = "2\n"

// Lists are the append-only sections stored one entry per file.
const (
	ListAlignment   = "alignment_history"
	ListAnomalies   = "anomalies"
	ListDiscovered  = "discovered"
	ListHumanNotes  = "human_notes"
	ListSpecChanges = "spec_changes"
)

var lists = []string{ListAlignment, ListAnomalies, ListDiscovered, ListHumanNotes, ListSpecChanges}

// Meta is liza.yaml: the parts of the state that are not collections. In
// layout 2 its sprint.scope.planned is empty: the planned ids are in
// planned/.
type Meta struct {
	Version        int                       `yaml:"version"`
	Goal           contracts.Goal            `yaml:"goal"`
	Config         contracts.Config          `yaml:"config"`
	Sprint         contracts.Sprint          `yaml:"sprint"`
	Control        *contracts.Control        `yaml:"control,omitempty"`
	CircuitBreaker *contracts.CircuitBreaker `yaml:"circuit_breaker,omitempty"`
	Extra          contracts.Extra           `yaml:",inline"`
}

// Every path an operation reads or writes is a logical one, as layout 1
// spelled it: <dir>/<id>.yaml, <list>/<n>.yaml, requests/<xx>/<hash>.
// A snapshot maps it to where its layout keeps the file (Snapshot.locate).

// EntityFile is the logical path of entity id of a collection (TasksDir,
// ArchiveDir, AgentsDir, HandoffDir).
func EntityFile(dir, id string) string { return dir + "/" + id + ".yaml" }

func seqName(n int) string { return fmt.Sprintf("%06d.yaml", n) }

// idOf strips ".yaml" from an entity file name.
func idOf(name string) (string, bool) {
	return strings.CutSuffix(name, ".yaml")
}

// bucket is the directory of tasks/ or archive/ that holds id: the first
// two hex digits of sha1(id), as <x>/<y>.
func bucket(id string) string {
	sum := sha1.Sum([]byte(id))
	var h [2]byte
	hex.Encode(h[:], sum[:1])
	return string(h[0:1]) + "/" + string(h[1:2])
}

// buckets lists every <x>/<y> directory name in tree order: slices of one
// string, made without an allocation each at every start.
var buckets = func() []string {
	const digits = "0123456789abcdef"
	var all [256 * 3]byte
	for i := range 256 {
		all[3*i], all[3*i+1], all[3*i+2] = digits[i/16], '/', digits[i%16]
	}
	names := string(all[:])
	out := make([]string, 256)
	for i := range out {
		out[i] = names[3*i : 3*i+3]
	}
	return out
}()

// chunkDir is the <c>/<cc> directory of the i-th (0-based) item of a list
// cut 64 to a leaf.
func chunkDir(i int) string {
	return fmt.Sprintf("%03d/%02d", i/4096, (i/64)%64)
}

// listFile is where layout 2 keeps the n-th (1-based) entry of a list.
func listFile(list string, n int) string {
	return list + "/" + chunkDir(n-1) + "/" + seqName(n)
}

// plannedFile is the file of layout 2 that holds the n-th (1-based)
// planned id.
func plannedFile(n int) string {
	c := (n - 1) / 64
	return fmt.Sprintf("%s/%03d/%02d", PlannedDir, c/64, c%64)
}

// isList reports whether dir is one of the lists.
func isList(dir string) bool {
	for _, l := range lists {
		if dir == l {
			return true
		}
	}
	return false
}

// seqOf parses a list entry's file name into its position.
func seqOf(name string) (int, bool) {
	id, ok := idOf(name)
	if !ok || len(id) < 6 || strings.TrimLeft(id, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(id)
	return n, err == nil && n > 0 && seqName(n) == name
}

// numberedOrder orders names that are zero-padded numbers by their value:
// tree order puts "1000" before "999".
func numberedOrder(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

// SortTasks puts tasks in board order: oldest first, then natural id order,
// so that a state imported from a seed file exports in its own order.
//
// The order is total on tasks of distinct ids (CompareNatural ends in byte
// order), and a board's ids are distinct: a stable sort would give the
// same order, more slowly.
func SortTasks(ts []*contracts.Task) {
	slices.SortFunc(ts, func(a, b *contracts.Task) int {
		return cmp.Or(strings.Compare(a.Created, b.Created), contracts.CompareNatural(a.ID, b.ID))
	})
}

// splitState cuts a whole state into the files of a layout 2 tree.
func splitState(s *contracts.State) (map[string][]byte, error) {
	files := map[string][]byte{LayoutFile: []byte(layoutV2)}
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
	meta.Sprint.Scope.Planned = contracts.StringList{}
	if err := put(MetaFile, &meta); err != nil {
		return nil, err
	}
	for dir, tasks := range map[string][]*contracts.Task{TasksDir: s.Tasks, ArchiveDir: s.Archive} {
		for _, t := range tasks {
			if err := put(dir+"/"+bucket(t.ID)+"/"+t.ID+".yaml", t); err != nil {
				return nil, err
			}
		}
		for b, shard := range shards(tasks) {
			files[dir+"/"+b+"/"+IndexFile] = shard
		}
	}
	for path, b := range plannedFiles(s.Sprint.Scope.Planned, 0, nil) {
		files[path] = b
	}
	for id, a := range s.Agents {
		if err := put(EntityFile(AgentsDir, id), a); err != nil {
			return nil, err
		}
	}
	for id, h := range s.Handoff {
		if err := put(EntityFile(HandoffDir, id), h); err != nil {
			return nil, err
		}
	}
	appendAll := func(list string, n int, at func(i int) any) error {
		for i := 0; i < n; i++ {
			if err := put(listFile(list, i+1), at(i)); err != nil {
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

// plannedFiles lays ids out as the planned ids from position have+1 on,
// after the have ids already planned; last is the content of the file that
// holds the have-th one (nil when have is a multiple of 64). It returns the
// files to write.
func plannedFiles(ids []string, have int, last []byte) map[string][]byte {
	files := map[string][]byte{}
	if have%64 == 0 {
		last = nil
	}
	cur := append([]byte(nil), last...)
	for i, id := range ids {
		n := have + i + 1
		cur = append(cur, id...)
		cur = append(cur, '\n')
		if n%64 == 0 || i == len(ids)-1 {
			files[plannedFile(n)] = cur
			cur = nil
		}
	}
	return files
}
