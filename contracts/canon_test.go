package contracts

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func init() { CrossCheckCanon() }

// canonTask is a task in the middle of its life, with the fields a claim,
// a checkpoint, a review and a session's spend write.
func canonTask() *Task {
	return &Task{
		ID: "task-12", Description: "Retry GET calls: with backoff", Status: ReadyForReview, Priority: 2,
		Created: "2026-11-28T12:24:01Z", SpecRef: "specs/vision.md#retry", Docs: StringList{"docs/a.md"},
		DoneWhen: "go test ./retry passes", Scope: "IN: retry/\nOUT: the client's 'timeouts'\n",
		DependsOn: StringList{}, Paths: StringList{"retry/", "client/*.go"}, MaxFiles: 4,
		AssignedTo: "coder-1", Worktree: ".worktrees/task-12", BaseCommit: "462e869d0e4f7be771b6bc7bdec9b7b1a7f23178",
		LeaseExpires: "2026-11-28T12:29:01Z", Iteration: 2, ReviewCommit: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
		ReviewCyclesCurrent: 1, ReviewCyclesTotal: 1, RejectionReason: "tests fail",
		RejectionFeedback: "The test `TestRetry` fails:\n\n    expected 3 tries, got 1\nSee #12.",
		Attempted:         StringList{"coder-2"}, IntegrationFix: true,
		History: []*HistoryEvent{
			{Time: "2026-11-28T12:24:01Z", Event: "created", Agent: "human"},
			{Time: "2026-11-28T12:24:01Z", Event: "claimed", Agent: "coder-1", From: "UNCLAIMED", To: "CLAIMED"},
			{Time: "2026-11-28T12:25:00Z", Event: "checkpoint", Agent: "coder-1", Checkpoint: &Checkpoint{
				Intent: "Wrap the GET in a loop", Assumptions: StringList{"the server is idempotent", "no: never"},
				Validation: "go test ./retry", FilesToModify: StringList{},
			}},
			{Time: "2026-11-28T12:26:00Z", Event: "session_ended", Agent: "coder-1", Usage: &Usage{
				Model: "claude-sonnet", InputTokens: 1200, OutputTokens: 340, CostUSD: 0.0123, CostSource: "reported",
			}, Extra: Extra{"exit": 0, "log": ".git/liza/logs/sessions/coder-1/20260117T100000-001-a.jsonl", "outcome": "done"}},
			{Time: "2026-11-28T12:27:00Z", Event: "session_ended", Agent: "coder-1", Usage: &Usage{}},
			{Time: "2026-11-28T12:28:00Z", Event: "submitted", Agent: "coder-1", Commit: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", Reason: "'quoted' # not a comment"},
		},
	}
}

// canonHeader is what liza.yaml holds (cas.Meta), in the middle of a
// sprint, with its metrics.
func canonHeader() []any {
	return []any{
		&Goal{ID: "goal-1", Description: "Make retries work", Status: "IN_PROGRESS", Created: "2026-11-28T12:23:59Z"},
		&Config{MaxCoderIterations: 10, MaxReviewCycles: 5, LeaseDuration: 300, HeartbeatInterval: 60,
			CoderPollInterval: 30, ReviewerPollInterval: 30, PlannerPollInterval: 30, IntegrationBranch: "integration",
			IntegrationTip: "462e869d0e4f7be771b6bc7bdec9b7b1a7f23178", MergeBatch: 4},
		&Sprint{ID: "sprint-1", GoalRef: "goal-1", Scope: SprintScope{Planned: StringList{}, Stretch: StringList{}},
			Timeline: SprintTimeline{Started: "2026-11-28T12:23:59Z"}, Status: "IN_PROGRESS",
			Metrics: Extra{"approval_rate": 1.0, "approvals": 15, "by_status": map[string]int{"APPROVED": 1, "INTEGRATION_FAILED": 4, "MERGED": 10, "READY_FOR_REVIEW": 2},
				"completion_rate": 0.667, "computed_at": "2026-11-28T12:23:59Z", "empty": map[string]any{}, "none": []any{},
				"warnings": []any{"high approval rate: 100% over 15 reviews; the reviewers' rejection rationale", "second"}}},
		&Control{Mode: "PAUSED", By: "human", Reason: "lunch: back at 2"},
	}
}

// TestCanonTakesTheStateFiles: the files a claim, an add and a review
// read and write are the canonical codec's, byte for byte the library's,
// and read back as the library reads them (crossCheck panics otherwise).
func TestCanonTakesTheStateFiles(t *testing.T) {
	for _, v := range append(canonHeader(),
		canonTask(),
		&Agent{Role: "coder", Status: "WORKING", CurrentTask: "task-12", LeaseExpires: "2026-11-28T12:29:01Z",
			Heartbeat: "2026-11-28T12:24:01Z", Generation: 3, Started: "2026-11-28T12:24:01Z", Host: "build-7"},
		&Agent{Role: "coder", Status: "STARTING", NotesProcessed: []int{1, 2, -30}},
		&struct {
			A []int `yaml:"a"`
			B []int `yaml:"b"`
		}{A: []int{4, 5}},
		&Task{ID: "task-1", DependsOn: nil, History: nil},
		&Checkpoint{},
		&Task{ID: "x", Extra: Extra{"patterns": []any{map[string]any{"a": 1, "tasks": []any{"t1", "t2"}}, map[string]any{}, "s"}}},
		&Task{ID: "x", Extra: Extra{"owner": nil, "list": []any{nil, 1}, "map": map[string]any{"from": nil, "to": 2}}},
		&Extra{"approvals": 15, "by_status": map[string]any{"MERGED": 3}}, &Extra{}, &[]any{"a", 1, map[string]any{"b": 2.5}}, &[]any{},
	) {
		b, ok := encodeCanon(v)
		if !ok {
			t.Fatalf("the canonical codec does not write %#v", v)
		}
		if want, _ := encodeLibrary(v); !bytes.Equal(b, want) {
			t.Fatalf("canonical:\n%s\nlibrary:\n%s", b, want)
		}
		got := reflect.New(reflect.TypeOf(v).Elem())
		if !decodeCanon(b, got.Interface()) {
			t.Fatalf("the canonical codec does not read what it wrote:\n%s", b)
		}
		checkDecode(b, got.Interface())
	}
}

// TestCanonQuotesAsTheLibrary: strings the library writes plain, in
// single quotes and in double quotes, by the rules of its resolver and its
// emitter.
func TestCanonQuotesAsTheLibrary(t *testing.T) {
	for _, s := range []string{
		".", ".5", ".5e3", "..x", "123", "0x1F", "0b101", "0o17", "0777", "1_000", "1e5", "1.", "+1", "-1.5e-3",
		"-foo", "2026-11-28", "2026-13-45", "2026-11-28T12:24:01Z", "2026-02-30T12:24:01Z", "2026-11-28 12:24:01", "2026-1-2t1:2:3Z",
		"12:30", "1:7", "1:67", "-1:30", "190:20:30.15", "1_0:20", "3 retries: \"x\" (2)", "1.2.3", "12ab",
		"462e869d0e4f7be771b6bc7bdec9b7b1a7f23178", "1e5e", "-.inf", ".NaN", "~", "<<", "y", "No", "off", "True",
		"null", "task-1", " lead", "trail ", `"hi" \ there`, "it's", "'q'", "a: b", "a:b", "a:", "a #b", "a#b",
		"- x", "-x", "-", "? x", "?x", ":x", ": x", "---x", "...x", "#x", ",x", "[x", "x, y [z] {w}", "%x", "@x",
		"`x`", "!x", "&x", "*x", "|x", ">x", "a\nb",
	} {
		v := &Task{ID: s}
		got, ok := encodeCanon(v)
		if !ok {
			t.Errorf("the canonical codec does not write %q", s)
			continue
		}
		if want, _ := encodeLibrary(v); !bytes.Equal(got, want) {
			t.Errorf("%q: canonical %q, library %q", s, got, want)
		}
		var back Task
		if !decodeCanon(got, &back) || back.ID != s {
			t.Errorf("%q: read back as %q", s, back.ID)
		}
	}
}

// TestCanonWritesDocumentsOfOneValue: a document that is not a struct.
func TestCanonWritesDocumentsOfOneValue(t *testing.T) {
	for _, v := range []any{5, int64(-3), "abc", "", "123", 2.5, true, map[string]string{"a": "b"}} {
		got, ok := encodeCanon(v)
		if want, _ := encodeLibrary(v); !ok || !bytes.Equal(got, want) {
			t.Errorf("%#v: canonical %q (%v), library %q", v, got, ok, want)
		}
	}
}

// TestCanonWritesStructsInMapsAndLists: structs held by a map or a list
// are written (the library reads such documents).
func TestCanonWritesStructsInMapsAndLists(t *testing.T) {
	for _, v := range []any{
		&[]*Anomaly{{ID: "anomaly-1", Type: "retry_loop", LoggedBy: "coder-1", Timestamp: "2026-11-28T12:24:01Z", Details: Extra{"count": 3}}, {}},
		&struct {
			Agents map[string]*Agent `yaml:"agents"`
			Tasks  []any             `yaml:"tasks"`
		}{Agents: map[string]*Agent{"coder-1": {Role: "coder"}, "code-reviewer-1": {}, "coder-10": {}, "coder-9": {}, "coder-100": {},
			"coder-19": {}, "planner-1": {}, "coder_x": {}, "coder-": {}, "coder-a": {}, "coder": {}, "Coder-2": {}, "coder-x-3": {}}, Tasks: []any{Task{ID: "a"}, &Checkpoint{}}},
	} {
		got, ok := encodeCanon(v)
		if want, _ := encodeLibrary(v); !ok || !bytes.Equal(got, want) {
			t.Errorf("%#v: canonical %q (%v), library %q", v, got, ok, want)
		}
	}
}

// TestCanonStepsAside: values and documents outside the canonical form
// are the library's, whose results the public functions return.
func TestCanonStepsAside(t *testing.T) {
	for _, v := range []any{
		&Task{ID: "x", Extra: Extra{"k8s": "ops"}},
		&Task{ID: "x", Extra: Extra{"owner": float32(1.5)}},
		&Task{ID: "x", Extra: Extra{"owner": (*Usage)(nil)}},
		&Task{ID: "x", Extra: Extra{"coder-01": "a", "coder-2": "b"}},
		&Task{ID: "x", Extra: Extra{"a1": "a", "coder-2": "b"}},
		&Task{ID: "x", Description: "caf\u00e9"},
		&Task{ID: "x", Description: "tab\there"},
		&Task{ID: "x", Description: "a\n\n"},
		&Task{ID: "x", Description: "trailing \nspace"},
		&Task{ID: "x", History: []*HistoryEvent{nil}},
		map[string]any{"k8s": 1},
		"a\nb",
		[]byte("x"),
	} {
		if _, ok := encodeCanon(v); ok {
			t.Errorf("the canonical codec wrote %#v", v)
		}
		if _, err := EncodeYAML(v); err != nil {
			t.Errorf("%#v: %v", v, err)
		}
	}
	for _, doc := range []string{
		"id: x # a comment\n",                // a comment
		"id: x\nid: y\n",                     // a key twice
		"id: 'x'\n  continued\n",             // a scalar on two lines
		"id: x\ndescription: >-\n  folded\n", // a folded block
		"id: x\ndescription: |2-\n   lead\n", // an indentation indicator
		"id: x\npriority: 0x10\n",            // an integer as strconv does not write it
		"id: x\ndepends_on: task-1\n",        // a list as one scalar
		"id: x\ndepends_on: [a, b]\n",        // a flow sequence
		"---\nid: x\n",                       // a document marker
		"id: &a x\n",                         // an anchor
		"id: x\nhistory:\n  - null\n",        // a null item
		"id: x\r\n",                          // a carriage return
		"id: 2026-11-28T12:24:01Z\n",         // a timestamp written plain
		"id: x\ndescription: |\n  a\n\n",     // a block ending with an empty line
		"",
	} {
		var got Task
		if decodeCanon([]byte(doc), &got) {
			t.Errorf("the canonical codec read %q as %#v", doc, got)
		}
	}
	// Documents beyond the library's bounds: its error is the one to give.
	var many, deep strings.Builder
	many.WriteString("id: x\nmetrics:\n")
	for i := range MaxMappingKeys + 1 {
		fmt.Fprintf(&many, "  %c%c%c: 1\n", 'a'+i/676, 'a'+i/26%26, 'a'+i%26)
	}
	deep.WriteString("id: x\n")
	for i := range 80 {
		fmt.Fprintf(&deep, "%sk:\n", strings.Repeat("  ", i))
	}
	deep.WriteString(strings.Repeat("  ", 80) + "k: 1\n")
	for _, doc := range []string{many.String(), deep.String()} {
		var got Task
		if decodeCanon([]byte(doc), &got) {
			t.Errorf("the canonical codec read a document of %d bytes beyond the library's bounds", len(doc))
		}
		if err := DecodeYAML([]byte(doc), &got); doc == many.String() && err == nil {
			t.Error("a mapping of more than MaxMappingKeys keys was read")
		}
	}
	// A key of the struct's among its unknown keys: the library panics.
	if _, ok := encodeCanon(&Task{ID: "x", Extra: Extra{"id": "twice"}}); ok {
		t.Error("the canonical codec wrote a key twice")
	}
	// A value decoded into something already set is the library's too.
	pre := Task{ID: "kept"}
	if decodeCanon([]byte("status: CLAIMED\n"), &pre) {
		t.Error("the canonical codec read into a task already set")
	}
}

// TestCanonReadsWhatTheLibraryReads: documents in the canonical form,
// hand-written, read as the library reads them.
func TestCanonReadsWhatTheLibraryReads(t *testing.T) {
	for _, doc := range []string{
		"id: x\ndescription: 'it''s'\n",
		"id: x\ndescription: \"123\"\n",
		"id: x\ndescription: |-\n  a\n\n  b\npriority: 2\n",
		"id: x\nhistory:\n  - {}\n  - time: \"2026-11-28T12:24:01Z\"\n    event: x\n",
		"id: x\nhistory:\n  - event: checkpoint\n    checkpoint:\n      intent: |\n        line\n      validation: v\n      files_to_modify: []\n",
		"id: x\nhistory:\n  - event: e\n    usage:\n      input_tokens: 5\n      cost_usd: 1e-05\n",
		"id: x\ndescription: |-\n  a\n   b\n",
		"id: x\nowner: ops\nexit: 0\nrate: 0.25\nok: true\nwhen: \"2026-11-28T12:24:01Z\"\nnested:\n  B: 1\n  A_B: |\n    x\n  list:\n    - 1\n    - b\n  e: {}\n  l: []\n",
		"id: x\nowner:\n  - a: b\n    c:\n      - d\n  - {}\n  - e\n",
		"id: x\npaths:\n  - a\n  - |-\n    b\n    c\n  - 'd: e'\n",
	} {
		var got Task
		if !decodeCanon([]byte(doc), &got) {
			t.Errorf("the canonical codec does not read %q", doc)
			continue
		}
		checkDecode([]byte(doc), &got)
	}
}

// FuzzCanonEncode writes tasks made of fuzzed strings and numbers with
// both codecs and reads them back.
func FuzzCanonEncode(f *testing.F) {
	f.Add("Retry GET calls: with backoff", "a\nb\n", "462e869d0e4f7be771b6bc7bdec9b7b1a7f23178", "y", int64(3), 0.0123)
	f.Add("- x", "'q' # c", "2026-11-28T12:24:01Z", "", int64(-1), 1e21)
	f.Add("a: b", "x\n  y", "0b101", "null", int64(0), -0.0)
	f.Add("? x", "{a}", "1e5", "---", int64(1<<40), 123456789.0)
	f.Add("owner", "APPROVED", "A_B", "a-b", int64(7), 0.25)
	f.Add("log", ".git/x", "B", "_b", int64(-7), 2.0)
	f.Add("1:30", "2026-1-2", "12:30:45.5", "-1_0:20", int64(60), 1e-7)
	f.Add("2026-11-28 12:24:01", "0o17", "+.5", "0b_1", int64(8), 5e-324)
	f.Fuzz(func(t *testing.T, a, b, c, d string, n int64, x float64) {
		v := &Task{ID: a, Description: b, Scope: c, Status: Status(d), Priority: int(n % 1000), DependsOn: StringList{a, d},
			History: []*HistoryEvent{{Time: c, Event: d, Reason: b, Checkpoint: &Checkpoint{Intent: a, Assumptions: StringList{c}}},
				{Usage: &Usage{Model: d, InputTokens: n, CostUSD: x}, Extra: Extra{a: b, "exit": n, c: x, d: map[string]any{b: c, a: []any{d, n, x, true, map[string]any{c: b, d: []any{a}}}}}}}}
		got, ok := encodeCanon(v)
		if !ok {
			return
		}
		want, err := encodeLibrary(v)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("canonical:\n%s\nlibrary (%v):\n%s", got, err, want)
		}
		var back Task
		if !decodeCanon(got, &back) {
			t.Fatalf("the canonical codec does not read what it wrote:\n%s", got)
		}
		checkDecode(got, &back)
	})
}

// FuzzCanonKeys writes maps whose keys end in numbers, as agents' ids
// do, with both codecs.
func FuzzCanonKeys(f *testing.F) {
	f.Add("coder", "code-reviewer", uint16(1), uint16(10))
	f.Add("a_b", "a-b", uint16(19), uint16(100))
	f.Fuzz(func(t *testing.T, a, b string, n, m uint16) {
		v := map[string]any{a: 1, b: 2}
		for _, k := range []string{a, b} {
			for _, x := range []uint16{n, m, n / 10, m * 10} {
				v[fmt.Sprintf("%s-%d", k, x)] = int(x)
			}
		}
		got, ok := encodeCanon(v)
		if !ok {
			return
		}
		if want, err := encodeLibrary(v); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("canonical:\n%s\nlibrary (%v):\n%s", got, err, want)
		}
	})
}

// FuzzCanonDecode reads fuzzed documents: whatever the canonical codec
// reads, the library reads the same.
func FuzzCanonDecode(f *testing.F) {
	for _, v := range []any{canonTask(), &Task{ID: "x"}} {
		b, _ := encodeLibrary(v)
		f.Add(b)
	}
	f.Add([]byte("id: x\ndescription: |-\n  a\n\n  b\n"))
	f.Add([]byte("id: 'it''s'\npriority: -3\nintegration_fix: true\n"))
	f.Add([]byte("id: x\nowner:\n  - a: b\n    c:\n      - d\n  - {}\n  - e\nexit: 0\nrate: 0.25\ncoder-2: null\n"))
	f.Add([]byte("id: x\nhistory:\n  - time: \"2026-11-28T12:24:01Z\"\n    checkpoint:\n      intent: |\n        line\n      files_to_modify: []\n    usage:\n      cost_usd: 1e-05\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Task
		if !decodeCanon(data, &got) {
			return
		}
		if strings.Contains(string(data), "\t") {
			t.Fatal("read a tab")
		}
		checkDecode(data, &got)
	})
}
