package ops

import (
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// importPrev is a board with one unclaimed task and one alignment entry.
func importPrev() *contracts.State {
	cfg := contracts.DefaultConfig()
	return &contracts.State{
		Goal:   contracts.Goal{ID: "goal-1", AlignmentHistory: []*contracts.AlignmentEntry{{Time: "2026-01-17T09:00:00Z", Event: "task_added", Task: "a"}}},
		Config: cfg,
		Tasks: []*contracts.Task{{ID: "a", Description: "Retyr", Status: contracts.Unclaimed, Priority: 3, DependsOn: contracts.StringList{},
			History: []*contracts.HistoryEvent{{Time: "2026-01-17T09:00:00Z", Event: "created", Agent: "planner-1"}}}},
	}
}

// importNext is prev as an import file brings it back: a deep copy.
func importNext(t *testing.T, prev *contracts.State) *contracts.State {
	t.Helper()
	b, err := contracts.EncodeYAML(prev)
	if err != nil {
		t.Fatal(err)
	}
	var next contracts.State
	if err := contracts.DecodeYAML(b, &next); err != nil {
		t.Fatal(err)
	}
	return &next
}

// TestImportKeepsRecords: under rule set 3 an import's text edits and
// config changes must carry the records Import writes, the integration
// branch may not change and the alignment history is kept as it was; an
// import made under rule set 2 is held to none of it, so the histories an
// older git-liza wrote keep verifying.
func TestImportKeepsRecords(t *testing.T) {
	const now = "2026-01-17T10:00:00Z"
	for _, c := range []struct {
		what   string
		change func(next *contracts.State)
		record bool   // let recordImport add its records first
		want   string // the refusal under rule set 3; "" when it lands
	}{
		{"a typo fixed, recorded", func(n *contracts.State) { n.Tasks[0].Description = "Retry" }, true, ""},
		{"a typo fixed, unrecorded", func(n *contracts.State) { n.Tasks[0].Description = "Retry" }, false, "the import edits task a (description) without recording it"},
		{"paths changed, with a made-up record", func(n *contracts.State) {
			n.Tasks[0].Paths = contracts.StringList{"src"}
			n.Tasks[0].History = append(n.Tasks[0].History, &contracts.HistoryEvent{Time: now, Event: "edited", Agent: "human", Reason: "changed nothing"})
		}, false, "the import edits task a (paths) without recording it"},
		{"a config change, recorded", func(n *contracts.State) { n.Config.LeaseDuration = 900 }, true, ""},
		{"a config change, unrecorded", func(n *contracts.State) { n.Config.MaxInFlight = 9 }, false, "the import changes the config (max_in_flight) without recording it"},
		{"the integration branch renamed", func(n *contracts.State) { n.Config.IntegrationBranch = "sneak" }, true, "the import changes config.integration_branch from integration to sneak"},
		{"an alignment entry rewritten", func(n *contracts.State) { n.Goal.AlignmentHistory[0].Task = "b" }, true, "the import edits entry 1 of goal.alignment_history"},
		{"nothing changed", func(*contracts.State) {}, true, ""},
	} {
		prev := importPrev()
		next := importNext(t, prev)
		c.change(next)
		if c.record {
			recordImport(prev, next, now)
		}
		err := importKeeps(prev, next, contracts.RulesImport, now)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.what, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
		// The same import, unrecorded, made under rule set 2.
		old := importNext(t, prev)
		c.change(old)
		if err := importKeeps(prev, old, contracts.RulesWhole, now); err != nil {
			t.Errorf("%s under rule set 2: %v", c.what, err)
		}
	}
}
