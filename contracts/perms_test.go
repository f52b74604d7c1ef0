package contracts

import (
	"slices"
	"strings"
	"testing"
)

func TestPermissions(t *testing.T) {
	const (
		H = 1 << iota // human
		P             // planner
		C             // coder
		R             // code reviewer
	)
	want := map[Op]int{
		OpInit: H, OpImport: H, OpAdd: H | P, OpEdit: H | P, OpFinalize: H | P,
		OpClaim: C, OpCheckpoint: C, OpHeartbeat: P | C | R, OpSubmit: C, OpHandoff: C,
		OpReview: R, OpVerdict: R, OpMerge: R,
		OpBlock: H | P | C, OpUnblock: H | P, OpSupersede: H | P, OpAbandon: H | P,
		OpRelease: H | P | C | R, OpArchive: H | P,
		OpAnomaly: H | P | C | R, OpDiscover: H | P | C | R, OpNote: H | P | C | R,
		OpPause: H, OpResume: H, OpAbort: H, OpRegister: P | C | R, OpSprint: H | P,
		OpConvert: H | P, OpGoal: H | P, OpAdopt: H, OpBudget: H | P, OpOverBudget: H | P | C | R,
	}
	if len(want) != len(Ops()) {
		t.Fatalf("expected table has %d ops, Ops() has %d", len(want), len(Ops()))
	}
	agents := []struct {
		id   string
		role Role
		bit  int
	}{{"", RoleHuman, H}, {"planner-1", RolePlanner, P}, {"coder-1", RoleCoder, C}, {"code-reviewer-1", RoleReviewer, R}}
	for _, op := range Ops() {
		for _, a := range agents {
			ok := want[op]&a.bit != 0
			if got := Allowed(a.role, op); got != ok {
				t.Errorf("Allowed(%s, %s) = %v, want %v", a.role, op, got, ok)
			}
			err := Permit(a.id, op)
			if (err == nil) != ok {
				t.Errorf("Permit(%q, %s) = %v, want ok=%v", a.id, op, err, ok)
			}
			if err != nil {
				wantCode(t, err, CodeInvalid)
			}
		}
	}
	for _, tc := range []struct {
		id  string
		op  Op
		msg string
	}{
		// A person reads a role as the prefix of its agents' ids
		// (code-reviewer), never as the state file stores it.
		{"coder-1", OpMerge, "coder-1 (coder) may not merge (allowed: code-reviewer)"},
		{"code-reviewer-1", OpAdd, "code-reviewer-1 (code-reviewer) may not add (allowed: human, planner)"},
		{"", OpClaim, "the human operator may not claim: claim needs --agent or LIZA_AGENT_ID"},
		{"planner-1", OpPause, "planner-1 (planner) may not pause (allowed: human)"},
		{"bob", OpNote, `invalid agent id "bob"`},
	} {
		if err := Permit(tc.id, tc.op); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Permit(%q, %s) = %v, want %q", tc.id, tc.op, err, tc.msg)
		}
	}
	if Allowed(RoleCoder, "fly") {
		t.Error("an unknown op is allowed")
	}
}

func TestAnomalyTypes(t *testing.T) {
	if len(AnomalyTypes) != 13 {
		t.Fatalf("%d anomaly types, want 13", len(AnomalyTypes))
	}
	required := map[string][]string{
		"retry_loop":          {"count", "error_pattern"},
		"trade_off":           {"what", "why", "debt_created"},
		"external_blocker":    {"blocker_service"},
		"assumption_violated": {"assumption", "reality"},
		"system_ambiguity":    {"protocol_section", "question"},
	}
	for name, typ := range AnomalyTypes {
		if !slices.Equal(typ.Required, required[name]) {
			t.Errorf("%s requires %v, want %v", name, typ.Required, required[name])
		}
		if len(typ.LoggedBy) == 0 {
			t.Errorf("%s is logged by nobody", name)
		}
	}
}

func TestCheckAnomaly(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    *Anomaly
		role Role
		msg  string
	}{
		{"ok", &Anomaly{Type: "retry_loop", Details: Extra{"count": 3, "error_pattern": "x"}}, RoleCoder, ""},
		{"reviewer retry loop", &Anomaly{Type: "retry_loop", Details: Extra{"count": 3, "error_pattern": "x"}}, RoleReviewer, ""},
		{"a message where the seed names no keys", &Anomaly{Type: "spec_gap", Details: Extra{"message": "no spec for timeouts"}}, RolePlanner, ""},
		// Seed 004 lists no required field ("—") for eight types: they
		// take none.
		{"no details, as the seed has spec_gap", &Anomaly{Type: "spec_gap"}, RolePlanner, ""},
		{"no details, as the seed has workaround", &Anomaly{Type: "workaround"}, RoleReviewer, ""},
		{"no details, as the seed has spec_ambiguity", &Anomaly{Type: "spec_ambiguity"}, RoleCoder, ""},
		{"a blank message", &Anomaly{Type: "workaround", Details: Extra{"message": " "}}, RoleReviewer, ""},
		{"any role", &Anomaly{Type: "system_ambiguity", Details: Extra{"protocol_section": "a", "question": "b"}}, RoleReviewer, ""},
		{"unknown type", &Anomaly{Type: "oops"}, RoleCoder, `unknown anomaly type "oops"`},
		{"wrong role", &Anomaly{Type: "review_deadlock", Details: Extra{"message": "m"}}, RoleReviewer, "code-reviewer may not log review_deadlock anomalies (logged by: planner)"},
		{"coder logs reviewer type", &Anomaly{Type: "workaround", Details: Extra{"message": "m"}}, RoleCoder, "coder may not log workaround"},
		{"missing details", &Anomaly{Type: "trade_off", Details: Extra{"what": "x", "why": ""}}, RoleCoder, "trade_off anomaly needs details why, debt_created"},
		{"nil detail", &Anomaly{Type: "external_blocker", Details: Extra{"blocker_service": nil}}, RoleCoder, "needs details blocker_service"},
	} {
		err := CheckAnomaly(tc.a, tc.role)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.msg)
			continue
		}
		wantCode(t, err, CodeInvalid)
	}
}
