package contracts

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestMayAlarmCoversEveryAlarm: a board that decodes only the tasks
// MayAlarm lets through, and hands Alarms the others as their summaries'
// stubs, raises the same alarms as one that decodes every task.
func TestMayAlarmCoversEveryAlarm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	for run := 0; run < 2000; run++ {
		st := alarmState()
		st.Tasks = nil
		st.Agents["coder-1"] = &Agent{Role: "coder", Status: pick("WORKING", "IDLE")}
		for i := 0; i < 1+r.IntN(4); i++ {
			tk := task("task-"+string(rune('a'+i)), Statuses[r.IntN(len(Statuses))])
			tk.Created = ago(time.Duration(r.IntN(7200)) * time.Second)
			if r.IntN(2) == 0 {
				tk.AssignedTo = "coder-1"
			}
			tk.LeaseExpires = ago(time.Duration(r.IntN(1200)-600) * time.Second)
			tk.ReviewingBy = pick("", "code-reviewer-1")
			tk.ReviewLeaseExpires = ago(time.Duration(r.IntN(1200)-600) * time.Second)
			tk.Iteration = r.IntN(12)
			tk.ReviewCyclesCurrent = r.IntN(7)
			for j := r.IntN(3); j > 0; j-- {
				tk.FailedBy = append(tk.FailedBy, "coder-9")
			}
			if r.IntN(4) == 0 {
				tk.PreviousAssignee = "coder-2"
			}
			if r.IntN(4) == 0 {
				tk.History = append(tk.History, &HistoryEvent{Time: ago(time.Minute), Event: pick("reclaimed", "rejected", "taken_over")})
			}
			tk.BlockedReason = pick("", "waits for a key")
			st.Tasks = append(st.Tasks, tk)
		}
		in := AlarmInput{Now: alarmNow, LastChange: alarmNow.Add(-time.Duration(r.IntN(7200)) * time.Second)}
		want := Alarms(st, in)
		lean := *st
		lean.Tasks = nil
		for _, tk := range st.Tasks {
			if s := tk.Summary(); !MayAlarm(s, st.Config, alarmNow) {
				tk = s.Stub()
			}
			lean.Tasks = append(lean.Tasks, tk)
		}
		if got := Alarms(&lean, in); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: from summaries %v, from every task %v", run, got, want)
		}
	}
}
