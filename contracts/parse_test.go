package contracts

import (
	"strings"
	"testing"
)

const seedState = `version: 1
goal:
  id: goal-1
  description: Build the thing
  status: IN_PROGRESS
  created: 2025-01-10T09:00:00Z
  owner: alice            # unknown goal field
config:
  max_coder_iterations: 10
  max_review_cycles: 5
  lease_duration: 1800
  heartbeat_interval: 60
  coder_poll_interval: 30
  reviewer_poll_interval: 30
  planner_poll_interval: 30
  integration_branch: integration
sprint:
  id: sprint-1
  goal_ref: goal-1
  scope:
    planned: [task-1]
    stretch: []
  timeline:
    started: 2025-01-10T09:00:00Z
  status: IN_PROGRESS
agents:
  coder-1:
    role: coder
    status: WORKING
    current_task: task-1
    lease_expires: 2025-01-10T09:30:00Z
tasks:
  - id: task-1
    description: Add the parser
    status: CLAIMED
    priority: 1
    created: 2025-01-10T09:00:00Z
    spec_ref: specs/parser.md
    done_when: parser tests pass
    depends_on: []
    assigned_to: coder-1
    worktree: .worktrees/task-1
    base_commit: abc123
    lease_expires: 2025-01-10T09:30:00Z
    iteration: 1
    estimate: 3h          # unknown task field
    history:
      - time: 2025-01-10T09:00:00Z
        event: claimed
        agent: coder-1
        host:             # unknown nested history field
          name: box-1
          pid: 42
  - id: task-2
    description: Add the printer
    status: DRAFT
    priority: 2
    depends_on: task-1
    history: []
anomalies:
  - id: anomaly-1
    type: retry_loop
    task_id: task-1
    logged_by: coder-1
    timestamp: 2025-01-10T09:10:00Z
    details:
      count: 3
      error_pattern: timeout
team: blue                # unknown top-level key
`

func TestParseState(t *testing.T) {
	s, err := ParseState([]byte(seedState))
	if err != nil {
		t.Fatal(err)
	}
	if ps := Validate(s); len(ps) > 0 {
		t.Fatalf("problems:\n%s", problemText(ps))
	}
	if got := s.Tasks[1].DependsOn; len(got) != 1 || got[0] != "task-1" {
		t.Errorf("scalar depends_on = %v", got)
	}
	if s.Tasks[0].Created != "2025-01-10T09:00:00Z" {
		t.Errorf("created = %q", s.Tasks[0].Created)
	}
	if s.Anomalies[0].Details["count"] != 3 {
		t.Errorf("details = %v", s.Anomalies[0].Details)
	}
}

func TestUnknownFieldsRoundTrip(t *testing.T) {
	s, err := ParseState([]byte(seedState))
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalState(s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseState(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if again.Extra["team"] != "blue" {
		t.Errorf("top-level team = %v", again.Extra["team"])
	}
	if again.Goal.Extra["owner"] != "alice" {
		t.Errorf("goal owner = %v", again.Goal.Extra["owner"])
	}
	if again.Tasks[0].Extra["estimate"] != "3h" {
		t.Errorf("task estimate = %v", again.Tasks[0].Extra["estimate"])
	}
	host, _ := again.Tasks[0].History[0].Extra["host"].(map[string]any)
	if host["name"] != "box-1" || host["pid"] != 42 {
		t.Errorf("history host = %#v", again.Tasks[0].History[0].Extra["host"])
	}
	if !same(s, again) {
		t.Errorf("state changed in the round trip:\n%s", out)
	}
	out2, err := MarshalState(again)
	if err != nil || string(out2) != string(out) {
		t.Errorf("second render differs:\n%s\n---\n%s", out, out2)
	}
}

func TestMarshalStateShape(t *testing.T) {
	out, err := MarshalState(&State{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nagents: {}\n", "\ntasks: []\n", "\nsprint:\n  id: \"\"\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	s := validState()
	out, err = MarshalState(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "\ntasks:\n  - id: task-1\n    description: do task-1\n") {
		t.Errorf("tasks are not indented by 2:\n%s", out)
	}
}

func TestParseStateErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "empty document"},
		{"comments only", "# nothing\n", "empty document"},
		{"null", "---\n~\n", "empty document"},
		{"syntax", "version: 1\ngoal:\n  id: [\n", "line 3: "},
		{"bad indent", "version: 1\ngoal:\n  id: g\n description: x\n", "line 3: did not find expected key"},
		{"type", "version: 1\ngoal:\n  id: g\ntasks:\n  - id: a\n    priority: high\n", "line 6: cannot unmarshal !!str `high` into int"},
		{"two type errors", "version: x\ntasks:\n  - priority: z\n", "line 1: cannot unmarshal !!str `x` into int; line 3: cannot unmarshal !!str `z` into int"},
		{"duplicate key", "version: 1\nversion: 2\n", `line 2: mapping key "version" already defined at line 1`},
		{"not a mapping", "- a\n", "line 1: cannot unmarshal !!seq"},
		{"list field", "tasks:\n  - id: a\n    depends_on: {a: b}\n", "line 3: expected a list of strings"},
		{"two documents", "version: 1\n---\nversion: 2\n", "line 3: more than one YAML document"},
	} {
		_, err := ParseState([]byte(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want prefix %q", tc.name, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: message is not one line: %q", tc.name, err)
		}
		wantCode(t, err, CodeInvalid)
	}
	if _, err := ParseState([]byte("version: 1\n---\n")); err != nil {
		t.Errorf("a trailing empty document: %v", err)
	}
}

func TestTaskRoundTrip(t *testing.T) {
	in := task("task-3", Unclaimed)
	in.Extra = Extra{"estimate": "2h"}
	data, err := MarshalTask(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParseTask(data)
	if err != nil {
		t.Fatal(err)
	}
	if !same(in, out) || out.Extra["estimate"] != "2h" {
		t.Errorf("task changed:\n%s", data)
	}
	if _, err := ParseTask([]byte("id: a\npriority: [1]\n")); err == nil || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Errorf("ParseTask error = %v", err)
	}
	if _, err := ParseTask(nil); err == nil || err.Error() != "empty document" {
		t.Errorf("ParseTask(nil) = %v", err)
	}
}

func TestDecodeYAML(t *testing.T) {
	var a Agent
	if err := DecodeYAML([]byte("role: coder\nstatus: IDLE\nseen: 2025-01-10T09:00:00Z\n"), &a); err != nil {
		t.Fatal(err)
	}
	if a.Role != "coder" || a.Extra["seen"] != "2025-01-10T09:00:00Z" {
		t.Errorf("agent = %+v", a)
	}
	out, err := EncodeYAML(map[string]any{"a": map[string]any{"b": 1}})
	if err != nil || string(out) != "a:\n  b: 1\n" {
		t.Errorf("EncodeYAML = %q, %v", out, err)
	}
}
