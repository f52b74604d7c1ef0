package contracts

import (
	"strings"
	"testing"
)

func TestRejectionCounts(t *testing.T) {
	tk := task("t1", Blocked)
	tk.BlockedReason, tk.BlockedQuestions = "deadlock", StringList{"split it?"}
	rej := func(at, reason string) *HistoryEvent {
		return &HistoryEvent{Time: at, Event: "rejected", Agent: "code-reviewer-1", Reason: reason}
	}
	tk.History = append(tk.History,
		rej(before, "old"),
		ev(before, "approved", "code-reviewer-1"),
		ev(before, "integration_failed", "code-reviewer-1"),
		rej(during, "one"),
		&HistoryEvent{Time: during, Event: "rejected", Agent: "code-reviewer-2", Reason: "two", Extra: Extra{"feedback": "use client.go"}},
		rej(during, "three"))
	if n := SprintRejections(tk, sprintStart); n != 3 {
		t.Errorf("rejections in the sprint: %d", n)
	}
	if n := SprintRejections(tk, ""); n != 4 {
		t.Errorf("rejections without a sprint start: %d", n)
	}
	// An approval starts the count of rejections in a row again.
	if n := ConsecutiveRejections(tk); n != 3 {
		t.Errorf("consecutive rejections: %d", n)
	}
	sum := RejectionSummary(tk)
	for _, want := range []string{
		"Task t1 was rejected 3 times in a row",
		"1. " + during + " by code-reviewer-1: one\n",
		"2. " + during + " by code-reviewer-2: two\n   feedback: use client.go\n",
		"3. " + during + " by code-reviewer-1: three\n",
		"Blocked: deadlock\n- split it?\n",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "old") {
		t.Errorf("summary lists a rejection before the last approval:\n%s", sum)
	}
}

func TestScopeLimit(t *testing.T) {
	tk := task("t1", Unclaimed)
	for _, c := range []struct {
		maxFiles, maxLOC, files, loc int
		ok                           bool
	}{
		{0, 0, 2, 1000, true}, // the seed's default: within 2 files
		{0, 0, 30, 150, true}, // or within 150 lines
		{0, 0, 3, 151, false}, // neither
		{1, 0, 1, 5000, true}, // the planner's bound alone
		{1, 0, 2, 1, false},   // which the lines do not rescue
		{0, 10, 1, 11, false}, // the same for lines
		{4, 10, 5, 10, true},  // both set: either passes
		{4, 10, 5, 11, false}, // neither
	} {
		tk.MaxFiles, tk.MaxLOC = c.maxFiles, c.maxLOC
		err := CheckScopeSize(tk, c.files, c.loc)
		if (err == nil) != c.ok {
			t.Errorf("limits %d files/%d lines, change %d files/%d lines: %v, want ok=%v", c.maxFiles, c.maxLOC, c.files, c.loc, err, c.ok)
		}
		if err != nil {
			wantCode(t, err, CodeInvalid)
		}
	}
	tk.MaxFiles, tk.MaxLOC = 0, 0
	if got := tk.ScopeLimitText(); got != "at most 2 files or at most 150 lines added and removed" {
		t.Errorf("default limit text %q", got)
	}
}
