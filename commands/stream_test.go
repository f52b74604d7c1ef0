package commands

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// streamSeed is a state with every section, entries across a list's
// 64-entry directories, text that YAML writes as block scalars (with an
// empty line inside), characters beyond ASCII and fields the schema does
// not know.
func streamSeed() string {
	var b strings.Builder
	b.WriteString(`version: 1
goal:
  id: goal-1
  description: "Retry every API call"
  status: IN_PROGRESS
  created: "2026-01-17T09:00:00Z"
  owner: platform-team
  alignment_history:
`)
	for i := 1; i <= 70; i++ {
		fmt.Fprintf(&b, "    - {time: \"2026-01-17T09:00:00Z\", event: task_added, task: task-%d, agent: planner-1}\n", i%3+1)
	}
	b.WriteString(`config: {integration_branch: integration}
sprint: {id: sprint-1, goal_ref: goal-1, status: IN_PROGRESS, scope: {planned: [task-2, task-1], stretch: [task-3]}, timeline: {started: "2026-01-17T09:00:00Z"}}
agents:
  planner-1: {role: planner, status: IDLE}
tasks:
  - id: task-2
    description: "later, café ✓"
    status: UNCLAIMED
    priority: 3
    created: "2026-01-17T09:30:00Z"
    spec_ref: specs/vision.md
    done_when: d
    scope: s
    depends_on: [task-1]
    iteration: 0
    history: []
  - id: task-1
    description: |
      line one

      line three, after an empty line
    status: UNCLAIMED
    priority: 2
    created: "2026-01-17T09:00:00Z"
    spec_ref: specs/vision.md
    done_when: |
      - tests pass
    scope: s
    depends_on: []
    iteration: 0
    estimate_hours: 3
    history:
      - {time: "2026-01-17T09:00:00Z", event: created, agent: planner-1, note: from the seed}
archive:
  - id: task-3
    description: done
    status: ABANDONED
    priority: 1
    created: "2026-01-17T08:00:00Z"
    spec_ref: specs/vision.md
    done_when: d
    scope: s
    depends_on: []
    iteration: 0
    rescope_reason: not needed
    history: []
anomalies:
  - {id: anomaly-1, type: spec_ambiguity, task_id: task-2, logged_by: planner-1, timestamp: "2026-01-17T10:00:00Z", details: {message: unclear}}
discovered:
  - {id: disc-1, by: planner-1, description: "slow\n\ncache it", severity: low}
handoff:
  task-1: {agent: coder-1, time: "2026-01-17T10:00:00Z", summary: half, next_action: finish}
human_notes:
`)
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&b, "  - {timestamp: \"2026-01-17T10:00:00Z\", message: \"note %d\\n\\nsecond paragraph\"}\n", i)
	}
	b.WriteString(`spec_changes:
  - {timestamp: "2026-01-17T10:00:00Z", spec: specs/vision.md, change: more}
team_channel: "#liza"
`)
	return b.String()
}

// TestStreamMatchesWhole: show and export, written one entity at a time,
// print byte for byte what rendering the whole state at once prints.
func TestStreamMatchesWhole(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("HOME", dir)
	root := filepath.Join(dir, "proj")
	// The seed's tasks name specs/vision.md, which an import requires.
	if err := os.MkdirAll(filepath.Join(root, "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "specs", "vision.md"), []byte("# Vision\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", root}, {"-C", root, "add", "specs"}, {"-C", root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "x"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo, err := refstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := ops.New(repo, ops.Options{Clock: func() time.Time { return time.Date(2026, 1, 17, 10, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.Import(ctx, ops.ImportRequest{Data: []byte(streamSeed()), Name: "seed.yaml"}); err != nil {
		t.Fatal(err)
	}
	snap, err := svc.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !svc.Trusted(ctx, snap, true) {
		t.Fatal("the state this repository imported is not trusted")
	}
	st, err := snap.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, archive := range []bool{true, false} {
		for _, asJSON := range []bool{false, true} {
			whole := *st
			if !archive {
				whole.Archive = nil
			}
			var want, got bytes.Buffer
			if err := render(&want, &whole, asJSON); err != nil {
				t.Fatal(err)
			}
			if err := writeState(&got, snap, true, archive, asJSON); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("archive %v, JSON %v: streamed\n%s\nwhole\n%s", archive, asJSON, got.String(), want.String())
			}
			if !strings.Contains(want.String(), "line three") || strings.Count(want.String(), "task_added") != 70 {
				t.Fatalf("the rendering lacks entries:\n%s", want.String())
			}
		}
	}
}
