package contracts

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// an is an anomaly of type typ on task t1 by coder-1 during the sprint,
// with details as alternating keys and values.
func an(typ string, kv ...any) *Anomaly {
	d := Extra{}
	for i := 0; i+1 < len(kv); i += 2 {
		d[kv[i].(string)] = kv[i+1]
	}
	return &Anomaly{Type: typ, TaskID: "t1", LoggedBy: "coder-1", Timestamp: during, Details: d}
}

// onBoard numbers the anomalies and puts them in a sprint with tasks t1-t3.
func onBoard(as ...*Anomaly) *State {
	st := sprintState(task("t1", Unclaimed), task("t2", Unclaimed), task("t3", Unclaimed))
	for i, a := range as {
		a.ID = fmt.Sprintf("anomaly-%d", i+1)
	}
	st.Anomalies = as
	return st
}

func on(task string, a *Anomaly) *Anomaly { a.TaskID = task; return a }

func by(agent string, a *Anomaly) *Anomaly { a.LoggedBy = agent; return a }

func at(ts string, a *Anomaly) *Anomaly { a.Timestamp = ts; return a }

// TestAnomalyPatterns gives each of the original breaker's six patterns a
// board that trips it and near misses that do not.
func TestAnomalyPatterns(t *testing.T) {
	cases := []struct {
		name string
		st   *State
		want []string // pattern:severity:anomalies
	}{
		{"retry_cluster: three retry loops, two alike",
			onBoard(an("retry_loop", "count", 3, "error_pattern", "serialization failure"),
				on("t2", an("retry_loop", "count", 4, "error_pattern", "serialization failure")),
				on("t3", an("retry_loop", "count", 3, "error_pattern", "timeout"))),
			[]string{"retry_cluster:ARCHITECTURE_FLAW:anomaly-1,anomaly-2,anomaly-3"}},
		{"near miss: two retry loops alike are not three",
			onBoard(an("retry_loop", "count", 3, "error_pattern", "serialization failure"),
				on("t2", an("retry_loop", "count", 4, "error_pattern", "serialization failure"))),
			nil},
		{"near miss: three retry loops, all different",
			onBoard(an("retry_loop", "count", 3, "error_pattern", "a"), an("retry_loop", "count", 3, "error_pattern", "b"),
				an("retry_loop", "count", 3, "error_pattern", "c")),
			nil},
		{"near miss: similar is exact (v1): \"timeout\" is not \"connection timeout\"",
			onBoard(an("retry_loop", "count", 3, "error_pattern", "timeout"), an("retry_loop", "count", 3, "error_pattern", "connection timeout"),
				an("retry_loop", "count", 3, "error_pattern", "x")),
			nil},

		{"debt_accumulation: three trade-offs that created debt",
			onBoard(an("trade_off", "what", "flatten entity", "why", "iteration limit", "debt_created", true),
				on("t2", an("trade_off", "what", "skip cache", "why", "time", "debt_created", true)),
				on("t3", an("trade_off", "what", "copy helper", "why", "time", "debt_created", true))),
			[]string{"debt_accumulation:SCOPE_FLAW:anomaly-1,anomaly-2,anomaly-3"}},
		{"near miss: a trade-off without debt does not count",
			onBoard(an("trade_off", "what", "a", "why", "w", "debt_created", true),
				an("trade_off", "what", "b", "why", "w", "debt_created", true),
				an("trade_off", "what", "c", "why", "w", "debt_created", false)),
			nil},

		{"assumption_cascade: the same assumption violated twice",
			onBoard(an("assumption_violated", "assumption", "API supports pagination", "reality", "max 100"),
				on("t2", by("code-reviewer-1", an("assumption_violated", "assumption", "API supports pagination", "reality", "no cursor")))),
			[]string{"assumption_cascade:SPEC_FLAW:anomaly-1,anomaly-2"}},
		{"near miss: two different assumptions",
			onBoard(an("assumption_violated", "assumption", "API supports pagination", "reality", "max 100"),
				an("assumption_violated", "assumption", "API is idempotent", "reality", "it is not")),
			nil},

		{"spec_gap_cluster: two ambiguities in the same spec section",
			onBoard(an("spec_ambiguity", "spec_ref", "specs/retry.md#auth"), on("t2", an("spec_ambiguity", "spec_ref", "specs/retry.md#auth"))),
			[]string{"spec_gap_cluster:SPEC_FLAW:anomaly-1,anomaly-2"}},
		{"near miss: two sections of one spec, or no spec_ref at all",
			onBoard(an("spec_ambiguity", "spec_ref", "specs/retry.md#auth"), an("spec_ambiguity", "spec_ref", "specs/retry.md#backoff"),
				an("spec_ambiguity"), an("spec_ambiguity")),
			nil},

		{"workaround_pattern: a workaround and a trade-off with one root cause",
			onBoard(by("code-reviewer-1", an("workaround", "root_cause", "serializer cannot nest")),
				on("t2", an("trade_off", "what", "flatten", "why", "w", "debt_created", false, "root_cause", "serializer cannot nest"))),
			[]string{"workaround_pattern:ARCHITECTURE_FLAW:anomaly-1,anomaly-2"}},
		{"workaround_pattern: without a root cause, the same what",
			onBoard(an("trade_off", "what", "flatten entity", "why", "a", "debt_created", false),
				an("trade_off", "what", "flatten entity", "why", "b", "debt_created", false)),
			[]string{"workaround_pattern:ARCHITECTURE_FLAW:anomaly-1,anomaly-2"}},
		{"near miss: two workarounds with different causes",
			onBoard(by("code-reviewer-1", an("workaround", "root_cause", "serializer")), by("code-reviewer-1", an("workaround", "root_cause", "cache"))),
			nil},

		{"external_service_outage: one service blocks two tasks",
			onBoard(an("external_blocker", "blocker_service", "payments-api"), on("t2", an("external_blocker", "blocker_service", "payments-api"))),
			[]string{"external_service_outage:EXTERNAL_DEPENDENCY:anomaly-1,anomaly-2"}},
		{"near miss: two services",
			onBoard(an("external_blocker", "blocker_service", "payments-api"), an("external_blocker", "blocker_service", "search-api")),
			nil},

		{"near miss: anomalies before the sprint do not count",
			onBoard(at(before, an("external_blocker", "blocker_service", "payments-api")), an("external_blocker", "blocker_service", "payments-api")),
			nil},
		{"one match per group, in table order",
			onBoard(an("external_blocker", "blocker_service", "b"), an("external_blocker", "blocker_service", "a"),
				an("external_blocker", "blocker_service", "a"), an("external_blocker", "blocker_service", "b"),
				an("assumption_violated", "assumption", "x", "reality", "y"), an("assumption_violated", "assumption", "x", "reality", "z")),
			[]string{"assumption_cascade:SPEC_FLAW:anomaly-5,anomaly-6", "external_service_outage:EXTERNAL_DEPENDENCY:anomaly-1,anomaly-4",
				"external_service_outage:EXTERNAL_DEPENDENCY:anomaly-2,anomaly-3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, m := range Analyze(c.st, nil) {
				got = append(got, m.Pattern+":"+m.Severity+":"+strings.Join(m.Anomalies, ","))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Analyze:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestAnomalyPatternEvidence(t *testing.T) {
	st := onBoard(an("external_blocker", "blocker_service", "payments-api"),
		on("t2", by("coder-2", an("external_blocker", "blocker_service", "payments-api"))))
	ms := Analyze(st, nil)
	if len(ms) != 1 {
		t.Fatalf("matches %+v", ms)
	}
	m := ms[0]
	if m.Count != 2 || !slices.Equal(m.Tasks, []string{"t1", "t2"}) || !slices.Equal(m.Agents, []string{"coder-1", "coder-2"}) {
		t.Errorf("match %+v", m)
	}
	if want := "2 external_blocker anomalies in this sprint name the same service payments-api"; m.Detail != want {
		t.Errorf("detail %q, want %q", m.Detail, want)
	}
	report := BreakerReport(ms)
	for _, want := range []string{"- external_service_outage: 2 external_blocker", "  anomalies: anomaly-1, anomaly-2\n", "  severity: EXTERNAL_DEPENDENCY\n"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	file := BreakerReportFile(st, ms, during)
	for _, want := range []string{
		"Triggered: " + during + "\n", "Pattern: external_service_outage\nSeverity: EXTERNAL_DEPENDENCY\n",
		"## Anomalies (raw)\n\n```yaml\n", "blocker_service: payments-api", "- [ ] Confirm the severity assessment\n",
		"git liza analyze --resolve TEXT",
	} {
		if !strings.Contains(file, want) {
			t.Errorf("report file lacks %q:\n%s", want, file)
		}
	}
}

// A debt_created detail written as text before details were typed still
// counts; anything but true does not.
func TestDebtCreatedText(t *testing.T) {
	st := onBoard(an("trade_off", "what", "a", "why", "w", "debt_created", "true"),
		an("trade_off", "what", "b", "why", "w", "debt_created", "TRUE"),
		an("trade_off", "what", "c", "why", "w", "debt_created", true))
	if got := PatternNames(Analyze(st, nil)); !slices.Equal(got, []string{PatternDebtAccumulation}) {
		t.Errorf("patterns %q", got)
	}
	st.Anomalies[2].Details["debt_created"] = "yes"
	if got := PatternNames(Analyze(st, nil)); len(got) != 0 {
		t.Errorf("patterns %q", got)
	}
}

func TestTypeDetails(t *testing.T) {
	got, err := TypeDetails(Extra{"count": "03", "debt_created": "true", "what": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if got["count"] != 3 || got["debt_created"] != true || got["what"] != "true" {
		t.Errorf("typed %#v", got)
	}
	for _, bad := range []Extra{{"count": "three"}, {"count": -1}, {"count": "1.5"}, {"debt_created": "maybe"}, {"debt_created": 1}} {
		if _, err := TypeDetails(bad); err == nil {
			t.Errorf("TypeDetails(%v) succeeded", bad)
		} else {
			wantCode(t, err, CodeInvalid)
		}
	}
}
