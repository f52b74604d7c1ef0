package cas

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

func summary(id string, r *rand.Rand) *contracts.TaskSummary {
	statuses := []contracts.Status{contracts.Unclaimed, contracts.Claimed, contracts.ReadyForReview, contracts.Merged}
	t := &contracts.TaskSummary{ID: id, Status: statuses[r.IntN(len(statuses))], Priority: 1 + r.IntN(5), Created: "2026-01-17T10:00:00Z",
		DependsOn: contracts.StringList{}, Paths: contracts.StringList{}}
	if t.Status == contracts.Claimed {
		t.AssignedTo, t.LeaseExpires = "coder-1", "2026-01-17T10:30:00Z"
	}
	if r.IntN(3) == 0 {
		t.DependsOn = contracts.StringList{"task-1", "task-2"}
	}
	if r.IntN(4) == 0 {
		t.Paths = contracts.StringList{"src/**", "docs/a.md"}
	}
	return t
}

// randomIndex is n random summaries, of tasks task-0, task-STEP, ...
func randomIndex(r *rand.Rand, n, step int) map[string]*contracts.TaskSummary {
	idx := map[string]*contracts.TaskSummary{}
	for i := range n {
		id := fmt.Sprintf("task-%d", i*step)
		idx[id] = summary(id, r)
	}
	return idx
}

// Patching a stored index gives the bytes a full rewrite gives, and
// decoding them gives the patched set back.
func TestPatchIndexMatchesEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	idx := randomIndex(r, 50, 2)
	raw := encodeIndex(idx)
	for round := range 200 {
		changed := map[string]*contracts.TaskSummary{}
		for range 1 + r.IntN(4) {
			id := fmt.Sprintf("task-%d", r.IntN(120))
			if r.IntN(3) == 0 {
				changed[id] = nil
				delete(idx, id)
			} else {
				changed[id] = summary(id, r)
				idx[id] = changed[id]
			}
		}
		patched, err := patchIndex(raw, changed)
		if err != nil {
			t.Fatal(err)
		}
		if len(idx) == 0 {
			if patched != nil {
				t.Fatalf("round %d: an index of no task is %q, want none", round, patched)
			}
			raw = nil
			continue
		}
		if want := encodeIndex(idx); !bytes.Equal(patched, want) {
			t.Fatalf("round %d: patched index\n%s\nwant\n%s", round, patched, want)
		}
		back, err := decodeIndex(patched)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(asMap(back), idx) && len(idx) > 0 {
			t.Fatalf("round %d: decoded index differs", round)
		}
		raw = patched
	}
	// The last task leaving a directory leaves no index there.
	if got, err := patchIndex(encodeIndex(nil), map[string]*contracts.TaskSummary{"a": nil}); err != nil || got != nil {
		t.Fatalf("empty: %q, %v", got, err)
	}
}

func asMap(sums []*contracts.TaskSummary) map[string]*contracts.TaskSummary {
	m := map[string]*contracts.TaskSummary{}
	for _, x := range sums {
		m[x.ID] = x
	}
	return m
}

// Values that hold the index's separators, or read as an empty field,
// come back as they were.
func TestIndexEscapes(t *testing.T) {
	tricky := &contracts.TaskSummary{ID: "task-1", Status: contracts.Unclaimed, Priority: 2, Created: "-",
		AssignedTo: "a%b", ReviewingBy: "x\ty", DependsOn: contracts.StringList{"-", "task-2"},
		Paths: contracts.StringList{"a,b", "tab\there", "new\nline", "", "100%", "-"}, Iteration: 3, ReviewCycles: 1, FailedBy: 2, Reassigned: true}
	raw := encodeIndex(map[string]*contracts.TaskSummary{tricky.ID: tricky})
	if n := bytes.Count(raw, []byte("\n")); n != 2 {
		t.Fatalf("index of one task has %d lines:\n%s", n, raw)
	}
	back, err := decodeIndex(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || !reflect.DeepEqual(back[0], tricky) {
		t.Fatalf("decoded %+v\nwant %+v", back[0], tricky)
	}
}

func TestIndexFormatErrors(t *testing.T) {
	good := encodeIndex(map[string]*contracts.TaskSummary{"a": {ID: "a", Status: contracts.Unclaimed, Priority: 1}})
	for name, raw := range map[string]string{
		"no header":       "a\tUNCLAIMED\t1\t-\t-\t-\t-\t-\t-\t-\t0\t0\t0\tfalse\n",
		"no final line":   string(good[:len(good)-1]),
		"short line":      indexHeader + "\na\tUNCLAIMED\t1\n",
		"long line":       indexHeader + "\na\tUNCLAIMED\t1\t-\t-\t-\t-\t-\t-\t-\t0\t0\t0\tfalse\textra\n",
		"bad priority":    indexHeader + "\na\tUNCLAIMED\tx\t-\t-\t-\t-\t-\t-\t-\t0\t0\t0\tfalse\n",
		"bad flag":        indexHeader + "\na\tUNCLAIMED\t1\t-\t-\t-\t-\t-\t-\t-\t0\t0\t0\tmaybe\n",
		"bad escape":      indexHeader + "\na%zz\tUNCLAIMED\t1\t-\t-\t-\t-\t-\t-\t-\t0\t0\t0\tfalse\n",
		"empty id fields": indexHeader + "\n\n",
	} {
		if _, err := decodeIndex([]byte(raw)); err == nil {
			t.Errorf("decodeIndex %s: accepted", name)
		}
		if name == "no header" || name == "no final line" {
			if _, err := patchIndex([]byte(raw), map[string]*contracts.TaskSummary{"b": nil}); err == nil {
				t.Errorf("patchIndex %s: accepted", name)
			}
		}
	}
}

// One task's line, read alone, is what decoding the whole file gives for
// it; a task the file does not hold is nil, and a file that is not an
// index is an error.
func TestIndexEntryMatchesDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	raw := encodeIndex(randomIndex(r, 200, 3))
	all, err := decodeIndex(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range all {
		got, err := indexEntry(raw, want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %+v, %v; decoding the file gives %+v", want.ID, got, err, want)
		}
	}
	for _, id := range []string{"task-1", "task-", "task-30-", "a", "zzz"} {
		if got, err := indexEntry(raw, id); got != nil || err != nil {
			t.Fatalf("%s, which the index does not hold: %+v, %v", id, got, err)
		}
	}
	for _, bad := range [][]byte{nil, []byte("not an index\n"), []byte(indexHeader + "\ntask-1"), []byte(indexHeader + "\ntask-1\n")} {
		if _, err := indexEntry(bad, "task-1"); err == nil {
			t.Fatalf("%q read as an index", bad)
		}
	}
}
