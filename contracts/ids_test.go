package contracts

import (
	"strings"
	"testing"
	"time"
)

func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"task-1", true},
		{"a", true},
		{"0", true},
		{"a--b", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"Task-1", false},
		{"FOO", false},
		{"-task", false},
		{"task..1", false},
		{"..", false},
		{"task/1", false},
		{"task_1", false},
		{"task 1", false},
		{"tâche", false},
		{"task.1", false},
	} {
		err := ValidID(tc.id)
		if (err == nil) != tc.ok {
			t.Errorf("ValidID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
			continue
		}
		if err != nil {
			wantCode(t, err, CodeInvalid)
			if !strings.Contains(err.Error(), `"`+tc.id+`"`) || !strings.Contains(err.Error(), "kebab-case") {
				t.Errorf("ValidID(%q) message %q does not name the id", tc.id, err)
			}
		}
	}
	if err := ValidTaskID("Foo_1"); err == nil || err.Error() != `invalid task id "Foo_1": ids are kebab-case ([a-z0-9-], at most 64 characters)` {
		t.Errorf("ValidTaskID(Foo_1) = %v", err)
	}
}

func TestParseAgentID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		role Role
		msg  string
	}{
		{"", RoleHuman, ""},
		{"planner-1", RolePlanner, ""},
		{"coder-1", RoleCoder, ""},
		{"coder-12", RoleCoder, ""},
		{"code-reviewer-2", RoleReviewer, ""},
		// Numbers from 1, nothing else: a suffix of another shape would
		// let one id pass for another in patterns such as coder-*.
		{"planner-alpha", "", "agent ids are planner-N"},
		{"coder-12-b", "", "agent ids are planner-N"},
		{"coder-0", "", "agent ids are planner-N"},
		{"coder-01", "", "agent ids are planner-N"},
		{"coder-1x", "", "agent ids are planner-N"},
		{"coder-1\n", "", "agent ids are planner-N"},
		{"bob", "", `invalid agent id "bob": agent ids are planner-N, coder-N or code-reviewer-N`},
		{"coder", "", "agent ids are planner-N"},
		{"coder-", "", "agent ids are planner-N"},
		{"coder--1", "", "agent ids are planner-N"},
		{"code-reviewer", "", "agent ids are planner-N"},
		{"reviewer-1", "", "agent ids are planner-N"},
		{"Coder-1", "", "agent ids are planner-N"},
		{"coder_1", "", "agent ids are planner-N"},
		{"coder-" + strings.Repeat("1", 59), "", "agent ids are planner-N"},
	} {
		role, err := ParseAgentID(tc.id)
		if tc.msg == "" {
			if err != nil || role != tc.role {
				t.Errorf("ParseAgentID(%q) = %q, %v; want %q", tc.id, role, err, tc.role)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseAgentID(%q) error = %v, want %q", tc.id, err, tc.msg)
			continue
		}
		wantCode(t, err, CodeInvalid)
	}
}

func TestTime(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 800, time.FixedZone("x", 3600))
	if got := FormatTime(at); got != "2025-03-04T04:06:07Z" {
		t.Errorf("FormatTime = %q", got)
	}
	for _, s := range []string{"2025-03-04T04:06:07Z", "2025-03-04T05:06:07+01:00", "2025-03-04T04:06:07.5Z"} {
		got, err := ParseTime(s)
		if err != nil || got.Location() != time.UTC || got.Truncate(time.Second) != at.UTC().Truncate(time.Second) {
			t.Errorf("ParseTime(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "2025-03-04", "2025-03-04 04:06:07", "yesterday"} {
		if _, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) succeeded", s)
		} else {
			wantCode(t, err, CodeInvalid)
		}
	}
}
