package contracts

import (
	"slices"
	"testing"
)

func taskIDs(s *State) []string {
	var ids []string
	for _, t := range append(slices.Clone(s.Tasks), s.Archive...) {
		if t == nil {
			ids = append(ids, "<nil>")
			continue
		}
		ids = append(ids, t.ID)
	}
	return ids
}

func FuzzParseValidate(f *testing.F) {
	f.Add([]byte("version: 1\ngoal: {id: g, description: d, status: s}\nconfig: {integration_branch: integration}\nsprint: {id: s1, goal_ref: g}\nagents: {}\ntasks: []\n"))
	f.Add([]byte(seedState))
	if data, err := MarshalState(validState()); err == nil {
		f.Add(data)
	}
	f.Add([]byte("tasks:\n  - id: a\n    depends_on: [b]\n  - id: b\n    depends_on: a\n  - null\narchive: [{id: a}]\n"))
	f.Add([]byte("\x00\xff: [}{"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseState(data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			return
		}
		Validate(s)
		CheckStateTransition(s, s)
		out, err := MarshalState(s)
		if err != nil {
			return
		}
		again, err := ParseState(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		if got, want := taskIDs(again), taskIDs(s); !slices.Equal(got, want) {
			t.Fatalf("task ids %q became %q", want, got)
		}
		if ps := CheckStateTransition(s, again); len(ps) > 0 {
			t.Fatalf("a round trip changed the state:\n%s", problemText(ps))
		}
	})
}
