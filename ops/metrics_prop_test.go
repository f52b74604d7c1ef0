package ops_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// TestMetricsAtMergeProperty runs random sequences of operations on a
// board, in-process on a real repository, each by the agent whose step it
// is: task add, claim (and its checkpoint), submit, review and verdict
// either way, merge, block, unblock, supersede, abandon, and git liza
// sprint metrics by hand. After every step, the stored sprint.metrics are
// what the step that last wrote them saw: a merge and a sprint metrics
// leave them equal to a full recomputation of the board they leave (as
// update-sprint-metrics.sh after each merge of wt-merge.sh), and any other
// step leaves them as they were. They are never impossible (more merged
// than tasks, a completion rate above 1, more approve-to-merge latencies
// than approvals). At the end every commit verifies by replay.
// LIZA_PROP_SEED picks one sequence (the failing one a run names).
func TestMetricsAtMergeProperty(t *testing.T) {
	seeds := []uint64{1, 2}
	if s := os.Getenv("LIZA_PROP_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []uint64{n}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) { metricsProperty(t, seed, 100) })
	}
}

func metricsProperty(t *testing.T, seed uint64, steps int) {
	human, root := newBoard(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	// One clock for every actor, moved on by each step, so that leases end
	// and latencies are measured.
	now := testNow
	as := func(agent string) *ops.Service {
		svc, err := ops.New(human.Repo, ops.Options{Agent: agent, Clock: func() time.Time { return now }, Budget: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	planner, reviewer, operator := as("planner-1"), as("code-reviewer-1"), as("")
	coders := []*ops.Service{as("coder-1"), as("coder-2"), as("coder-3")}
	state := func() *contracts.State {
		st, err := human.State(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// withStatus is the ids of the live tasks in one of statuses.
	withStatus := func(st *contracts.State, statuses ...contracts.Status) []string {
		var out []string
		for _, tk := range st.Tasks {
			for _, s := range statuses {
				if tk.Status == s {
					out = append(out, tk.ID)
				}
			}
		}
		return out
	}
	pick := func(ids []string) string {
		if len(ids) == 0 {
			return "none"
		}
		return ids[rng.IntN(len(ids))]
	}
	added, commits := 0, 0
	landed := map[string]int{} // the merges and sprint metrics that landed
	add := func() (string, error) {
		added++
		_, err := planner.AddTask(ctx, ops.AddTaskRequest{Task: task(fmt.Sprintf("t%d", added))})
		return "add", err
	}
	for range 3 {
		if _, err := add(); err != nil {
			t.Fatal(err)
		}
	}

	steps0 := steps
	for step := 1; step <= steps0; step++ {
		now = now.Add(time.Duration(1+rng.IntN(20)) * time.Minute)
		before := state()
		coder := coders[rng.IntN(len(coders))]
		var what string
		var err error
		writes := false // the step writes sprint.metrics when it lands
		switch r := rng.IntN(100); {
		case r < 8:
			what, err = add()
		case r < 30:
			id := pick(withStatus(before, contracts.Unclaimed, contracts.Rejected, contracts.Claimed, contracts.IntegrationFailed))
			what = "claim " + id + " by " + coder.Agent
			if _, err = coder.Claim(ctx, ops.ClaimRequest{Task: id}); err == nil {
				_, err = coder.Checkpoint(ctx, ops.CheckpointRequest{Task: id, Checkpoint: contracts.Checkpoint{
					Intent: "write " + id, Validation: "the integration test", FilesToModify: contracts.StringList{id + ".txt"}}})
			}
		case r < 42:
			id := pick(withStatus(before, contracts.Claimed))
			tk := before.Task(id)
			what = "submit " + id
			if tk != nil {
				commits++
				commitIn(t, root, id, id+".txt", strconv.Itoa(commits))
				_, err = as(tk.AssignedTo).Submit(ctx, ops.SubmitRequest{Task: id})
			}
		case r < 60:
			id := pick(withStatus(before, contracts.ReadyForReview))
			approve := rng.IntN(3) > 0
			what = fmt.Sprintf("verdict %s approve=%v", id, approve)
			if tk := before.Task(id); tk == nil || tk.ReviewingBy != reviewer.Agent {
				_, err = reviewer.Review(ctx, ops.ReviewRequest{Task: id})
			}
			if err == nil {
				v := ops.VerdictRequest{Task: id, Approve: true}
				if !approve {
					v.Reason, v.Feedback = "reason "+strconv.Itoa(step), "feedback"
				}
				_, err = reviewer.Verdict(ctx, v)
			}
		case r < 75:
			id := pick(withStatus(before, contracts.Approved))
			what, writes = "merge "+id, true
			_, err = reviewer.Merge(ctx, ops.MergeRequest{Task: id})
		case r < 79:
			id := pick(withStatus(before, contracts.Unclaimed, contracts.Claimed))
			what = "block " + id
			_, err = planner.Block(ctx, ops.BlockRequest{Task: id, Reason: "unclear", Questions: []string{"which?"}})
		case r < 86:
			id := pick(withStatus(before, contracts.Blocked))
			what = "unblock " + id
			_, err = planner.Unblock(ctx, ops.UnblockRequest{Task: id})
		case r < 89:
			id := pick(withStatus(before, contracts.Unclaimed, contracts.Blocked))
			what, err = add()
			if err == nil {
				what = fmt.Sprintf("supersede %s by t%d", id, added)
				_, err = planner.Supersede(ctx, ops.SupersedeRequest{Task: id, By: []string{fmt.Sprintf("t%d", added)}, Reason: "rescoped"})
			}
		case r < 92:
			id := pick(withStatus(before, contracts.Unclaimed, contracts.Blocked))
			what = "abandon " + id
			_, err = planner.Abandon(ctx, ops.AbandonRequest{Task: id, Reason: "not needed"})
		case r < 96:
			what, writes = "sprint metrics", true
			_, err = planner.SprintMetrics(ctx, ops.Call{})
		default:
			what = "resume"
			_, err = operator.SetMode(ctx, ops.ModeRequest{Mode: contracts.ModeRunning})
		}
		if ops.Class(err) != contracts.CodeInvalid && err != nil {
			t.Fatalf("step %d (%s): %v", step, what, err)
		}
		if os.Getenv("LIZA_PROP_LOG") != "" {
			t.Logf("step %d: %s: %v", step, what, err)
		}
		after := state()
		stored := metricsWithout(t, after.Sprint.Metrics)
		if writes && err == nil {
			landed[what[:5]]++
			fresh, ferr := contracts.SprintMetrics(after, now).Extra()
			if ferr != nil {
				t.Fatal(ferr)
			}
			if want := metricsWithout(t, fresh); stored != want {
				t.Fatalf("step %d (%s): stored metrics\n%s\nfull recomputation\n%s", step, what, stored, want)
			}
		} else if was := metricsWithout(t, before.Sprint.Metrics); stored != was {
			t.Fatalf("step %d (%s, %v) changed the metrics from\n%s\nto\n%s", step, what, err, was, stored)
		}
		if m := after.Sprint.Metrics; m != nil {
			num := func(k string) float64 {
				switch v := m[k].(type) {
				case int:
					return float64(v)
				case float64:
					return v
				}
				return 0
			}
			if num("tasks_merged") > num("tasks_total") || num("completion_rate") > 1 || num("approve_to_merge_count") > num("approvals") {
				t.Fatalf("step %d (%s): impossible metrics\n%s", step, what, stored)
			}
		}
	}
	st := state()
	if n := len(withStatus(st, contracts.Merged)); n > 0 && st.Sprint.Metrics == nil {
		t.Fatalf("%d tasks merged and no sprint.metrics", n)
	}
	v, err := operator.Validate(ctx, ops.ValidateRequest{History: true})
	if err != nil || len(v.Problems) > 0 {
		t.Fatalf("validate --history: %v %+v", err, v)
	}
	if landed["merge"] == 0 {
		t.Fatalf("seed %d: no merge landed in %d steps", seed, steps)
	}
	t.Logf("seed %d: %d tasks, by status %v; %d merges and %d sprint metrics checked", seed, len(st.Tasks),
		contracts.SprintMetrics(st, now).ByStatus, landed["merge"], landed["sprin"])
}

// metricsWithout renders sprint.metrics without computed_at, the one value
// a recomputation at another moment may change alone.
func metricsWithout(t *testing.T, m contracts.Extra) string {
	t.Helper()
	if m == nil {
		return "null"
	}
	c := contracts.Extra{}
	for k, v := range m {
		if k != "computed_at" {
			c[k] = v
		}
	}
	b, err := contracts.EncodeYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
