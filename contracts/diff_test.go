package contracts

import (
	"reflect"
	"testing"
)

func TestDiffYAML(t *testing.T) {
	old := "id: t1\nstatus: CLAIMED\nlease_expires: \"2026-01-17T10:30:00Z\"\ndepends_on: [a]\nhistory:\n  - event: created\n    agent: human\n"
	cur := "id: t1\nstatus: BLOCKED\nblocked_reason: spec gap\ndepends_on: [a, b]\nhistory:\n  - event: created\n    agent: planner-1\n  - event: blocked\n    agent: coder-1\n    reason: spec gap\n"
	got, err := DiffYAML([]byte(old), []byte(cur))
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldChange{
		{Field: "status", Old: "CLAIMED", New: "BLOCKED"},
		{Field: "blocked_reason", New: "spec gap", Added: true},
		{Field: "depends_on", Old: "[a]", New: "[a, b]"},
		{Field: "history[0].agent", Old: "human", New: "planner-1"},
		{Field: "history[1]", New: "event: blocked, agent: coder-1, reason: spec gap", Added: true},
		{Field: "lease_expires", Old: "2026-01-17T10:30:00Z", Removed: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	// An entity added: every field is new; removed: every field goes.
	if got, _ := DiffYAML(nil, []byte("id: x\n")); len(got) != 1 || !got[0].Added {
		t.Errorf("added: %+v", got)
	}
	if got, _ := DiffYAML([]byte("id: x\n"), nil); len(got) != 1 || !got[0].Removed {
		t.Errorf("removed: %+v", got)
	}
	if got, _ := DiffYAML([]byte(old), []byte(old)); len(got) != 0 {
		t.Errorf("same: %+v", got)
	}
}
