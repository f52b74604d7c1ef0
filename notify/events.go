// Package notify tells a person when the team needs one: it computes, from
// the board alone, the events that call for a person (a task blocked, an
// integration that failed, the circuit breaker, a checkpoint, a supervisor
// that gave up, a pause or an abort, a review nobody takes, the goal
// completed) and sends each of them once through the channels the user
// configured (the desktop, a command, a webhook).
package notify

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// The kinds of event, in the order they are listed.
const (
	KindBlocked           = "blocked"
	KindIntegrationFailed = "integration_failed"
	KindReviewWaiting     = "review_waiting"
	KindBreakerTriggered  = "breaker_triggered"
	KindCheckpoint        = "checkpoint"
	KindPaused            = "paused"
	KindAborted           = "aborted"
	KindSupervisorStopped = "supervisor_stopped"
	KindRemoteUnreachable = "remote_unreachable"
	KindRemoteUnstored    = "remote_unstored"
	KindDiskFull          = "disk_full"
	KindGoalCompleted     = "goal_completed"
)

// Kinds lists every kind of event.
var Kinds = []string{KindBlocked, KindIntegrationFailed, KindReviewWaiting, KindBreakerTriggered,
	KindCheckpoint, KindPaused, KindAborted, KindSupervisorStopped, KindRemoteUnreachable, KindRemoteUnstored, KindDiskFull, KindGoalCompleted}

// The bounds of an event's text, in bytes: a title fits a desktop
// notification's first line, a body a phone's screen; agents' text
// (questions, reasons) can be any size.
const (
	MaxTitle = 200
	MaxBody  = 2000
)

// Event is one state of the board that needs a person.
type Event struct {
	// ID names the event and is the same wherever and whenever the board
	// is looked at: kind/subject@mark, where mark is what the board itself
	// recorded when the condition came about (the time of the task's
	// history event that made it, the control switch's since, the
	// breaker's triggered_at, the goal's completed, the supervisor's
	// generation). A condition that ends and comes about again gets a new
	// mark, and so a new event.
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Task   string `json:"task,omitempty"`
	Agent  string `json:"agent,omitempty"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	Action string `json:"action"`
	// Commit is the state commit the event was seen at.
	Commit string `json:"commit"`
	// Time is when it was seen.
	Time string `json:"time"`
}

// Events lists the events of st, looked at at now; commit is the state
// commit st was read from. It is a pure function of its input. A lean
// state (ops.Observe) serves when it holds whole the BLOCKED,
// INTEGRATION_FAILED and READY_FOR_REVIEW tasks.
func Events(st *contracts.State, commit string, now time.Time) []Event {
	if st == nil {
		return nil
	}
	cfg := st.Config
	cfg.FillDefaults()
	var out []Event
	add := func(e Event) {
		e.Title = clip(oneLine(e.Title), MaxTitle)
		e.Body = clip(contracts.PrintableText(e.Body), MaxBody)
		e.Commit, e.Time = commit, contracts.FormatTime(now)
		out = append(out, e)
	}
	for _, t := range st.Tasks {
		if t == nil {
			continue
		}
		switch t.Status {
		case contracts.Blocked:
			mark := entered(t, contracts.Blocked)
			body := "Reason: " + orNone(t.BlockedReason)
			for _, q := range t.BlockedQuestions {
				body += "\nQuestion: " + q
			}
			add(Event{ID: id(KindBlocked, t.ID, mark), Kind: KindBlocked, Task: t.ID,
				Title:  fmt.Sprintf("%s is BLOCKED: %s", t.ID, orNone(t.BlockedReason)),
				Body:   body,
				Action: fmt.Sprintf("git liza task unblock %s  (or: git liza note --for %s MESSAGE)", t.ID, t.ID)})
		case contracts.IntegrationFailed:
			if !needsHuman(t, st) {
				continue
			}
			mark := entered(t, contracts.IntegrationFailed)
			reason := contracts.ReasonOf(t)
			add(Event{ID: id(KindIntegrationFailed, t.ID, mark), Kind: KindIntegrationFailed, Task: t.ID,
				Title:  fmt.Sprintf("%s failed to integrate: %s", t.ID, orNone(reason)),
				Body:   fmt.Sprintf("Reason: %s\n%s", orNone(reason), failedWhy(t, st)),
				Action: fmt.Sprintf("git liza agent coder  (or: git liza task block %s --reason TEXT)", t.ID)})
		case contracts.ReadyForReview:
			if t.ReviewingBy != "" {
				continue
			}
			mark := entered(t, contracts.ReadyForReview)
			since, err := contracts.ParseTime(mark)
			wait := time.Duration(cfg.LeaseDuration) * time.Second
			if err != nil || now.Sub(since) <= wait {
				continue
			}
			add(Event{ID: id(KindReviewWaiting, t.ID, mark), Kind: KindReviewWaiting, Task: t.ID,
				Title:  fmt.Sprintf("%s waits for a reviewer since %s", t.ID, mark),
				Body:   fmt.Sprintf("Submitted at %s; no reviewer took it within the lease (%s).", mark, wait),
				Action: "git liza agent code-reviewer"})
		}
	}
	breaker := st.CircuitBreaker != nil && st.CircuitBreaker.Status == contracts.BreakerTriggered
	if breaker {
		cb := st.CircuitBreaker
		add(Event{ID: id(KindBreakerTriggered, "", cb.TriggeredAt), Kind: KindBreakerTriggered,
			Title:  "circuit breaker TRIGGERED" + paren(cb.Severity) + ": the team is in CHECKPOINT",
			Body:   fmt.Sprintf("Triggered at %s. The report: git liza analyze (and .liza/circuit_breaker_report.md).", cb.TriggeredAt),
			Action: "git liza analyze --resolve TEXT"})
	}
	if c := st.Control; c != nil {
		why := ""
		if c.Reason != "" {
			why = "\nReason: " + c.Reason
		}
		switch c.Mode {
		case contracts.ModeCheckpoint:
			if !breaker { // the breaker's own checkpoint is told as the breaker
				add(Event{ID: id(KindCheckpoint, "", c.Since), Kind: KindCheckpoint,
					Title:  "sprint checkpoint: the summary is ready",
					Body:   fmt.Sprintf("Since %s by %s. Tasks: %s.\nThe summary: .liza/sprint_summary.md%s", c.Since, c.By, tally(st), why),
					Action: "git liza resume"})
			}
		case contracts.ModePaused:
			action := "git liza resume"
			if contracts.BudgetPaused(c) {
				// Resumed over its budget, the team would pause again.
				flag := "--goal-tokens N"
				if budgetKey(c.Reason) == "goal_usd" {
					flag = "--goal-usd X"
				}
				action = "git liza budget " + flag + " (raising the goal's budget resumes the team)"
			}
			add(Event{ID: id(KindPaused, "", c.Since), Kind: KindPaused,
				Title: "the team is PAUSED" + paren("by "+c.By), Body: "Since " + c.Since + why, Action: action})
		case contracts.ModeAborted:
			add(Event{ID: id(KindAborted, "", c.Since), Kind: KindAborted,
				Title: "the team is ABORTED" + paren("by "+c.By), Body: "Since " + c.Since + why, Action: "git liza resume"})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(st.Agents)) {
		a := st.Agents[name]
		if a == nil || a.StopReason == "" || a.Host != "" {
			continue
		}
		role, _ := contracts.ParseAgentID(name)
		add(Event{ID: id(KindSupervisorStopped, name, fmt.Sprintf("g%d", a.Generation)), Kind: KindSupervisorStopped, Agent: name,
			Title:  fmt.Sprintf("the supervisor of %s stopped: %s", name, a.StopReason),
			Body:   "Reason: " + a.StopReason,
			Action: fmt.Sprintf("git liza doctor, then git liza agent %s", role.IDPrefix())})
	}
	if st.Goal.Status == "COMPLETED" {
		add(Event{ID: id(KindGoalCompleted, st.Goal.ID, st.Goal.Completed), Kind: KindGoalCompleted,
			Title:  fmt.Sprintf("goal %s COMPLETED", st.Goal.ID),
			Body:   fmt.Sprintf("Completed at %s. %s", st.Goal.Completed, clip(oneLine(st.Goal.Description), 300)),
			Action: "git liza sprint metrics"})
	}
	return out
}

// RemoteAfter is how long the board's remote may go without answering
// before a watcher calls a person: the supervisors wait an outage out by
// themselves and go on once it ends, and a hub's restart takes less.
const RemoteAfter = 5 * time.Minute

// RemoteUnreachable is the event of a remote that has not answered since
// fetched, the last time this clone fetched its board, looked at at now
// (why is the last failure): none before RemoteAfter. Unlike the others it
// is not on the board, which cannot be fetched; its mark, the time of the
// last fetch, is what every watcher of the clone reads alike, so that the
// outage is told once.
func RemoteUnreachable(remote, why string, fetched time.Time, commit string, now time.Time) (Event, bool) {
	gone := now.Sub(fetched)
	if gone < RemoteAfter {
		return Event{}, false
	}
	at := contracts.FormatTime(fetched)
	return Event{ID: id(KindRemoteUnreachable, remote, at), Kind: KindRemoteUnreachable,
		Title: clip(oneLine(fmt.Sprintf("the remote %s has not answered for %s", remote, gone.Round(time.Minute))), MaxTitle),
		Body: clip(contracts.PrintableText(fmt.Sprintf("Last fetched at %s. The last failure: %s\n"+
			"The supervisors wait for it, start no session meanwhile, and go on by themselves once it answers.", at, why)), MaxBody),
		Action: fmt.Sprintf("check the server of %s: git ls-remote %s", remote, remote),
		Commit: commit, Time: contracts.FormatTime(now)}, true
}

// HeldAfter is how long the remote may store nothing, or the repository's
// disk stay full, before a watcher calls a person: the supervisors wait
// either out by themselves, and a disk filled by a build or a log for a
// minute or two is freed as often as not; past that, something keeps it
// full that a person must see to.
const HeldAfter = 2 * time.Minute

// RemoteUnstored is the event of a remote that has stored nothing the
// supervisors pushed since since (the first of them to see it, as they
// record it: see agent's hold markers), looked at at now; why is what the
// remote said. None before HeldAfter.
func RemoteUnstored(remote, why string, since time.Time, commit string, now time.Time) (Event, bool) {
	held := now.Sub(since)
	if held < HeldAfter {
		return Event{}, false
	}
	return Event{ID: id(KindRemoteUnstored, remote, contracts.FormatTime(since)), Kind: KindRemoteUnstored,
		Title: clip(oneLine(fmt.Sprintf("the remote %s has stored nothing for %s", remote, held.Round(time.Minute))), MaxTitle),
		Body: clip(contracts.PrintableText(fmt.Sprintf("Since %s it refuses every push it is sent: %s\n"+
			"Its disk may be full. The supervisors wait, start no session meanwhile, and go on by themselves once it stores again.",
			contracts.FormatTime(since), why)), MaxBody),
		Action: fmt.Sprintf("make room on the server of %s (df; git gc there)", remote),
		Commit: commit, Time: contracts.FormatTime(now)}, true
}

// DiskFull is the event of the repository's disk full since since (as
// this watcher saw it) at dir, looked at at now; room says what is left.
// None before HeldAfter. Its mark is the state commit at the tip, commit,
// which every watcher of the repository reads alike and which does not
// move while the disk is full: the disk is told once per fill.
func DiskFull(dir, room string, since time.Time, commit string, now time.Time) (Event, bool) {
	held := now.Sub(since)
	if held < HeldAfter {
		return Event{}, false
	}
	return Event{ID: id(KindDiskFull, "", commit), Kind: KindDiskFull,
		Title:  clip(oneLine(fmt.Sprintf("the disk of %s has been full for %s", dir, held.Round(time.Minute))), MaxTitle),
		Body:   clip(contracts.PrintableText(fmt.Sprintf("%s. The supervisors wait, start no session meanwhile, and go on by themselves once there is room.", room)), MaxBody),
		Action: fmt.Sprintf("make room on the disk of %s (df %s)", dir, dir),
		Commit: commit, Time: contracts.FormatTime(now)}, true
}

func id(kind, subject, mark string) string {
	if subject != "" {
		kind += "/" + subject
	}
	return kind + "@" + mark
}

// entered is the time of the last history event that took t to status.
func entered(t *contracts.Task, status contracts.Status) string {
	for i := len(t.History) - 1; i >= 0; i-- {
		if e := t.History[i]; e != nil && e.To == string(status) {
			return e.Time
		}
	}
	return ""
}

// needsHuman reports whether an INTEGRATION_FAILED task waits for a
// person: its coder has no supervisor running to take it back, or it
// failed to integrate twice.
func needsHuman(t *contracts.Task, st *contracts.State) bool {
	a := st.Agents[t.AssignedTo]
	return a == nil || a.Host == "" || failures(t) >= 2
}

func failures(t *contracts.Task) int {
	n := 0
	for _, e := range t.History {
		if e != nil && e.To == string(contracts.IntegrationFailed) {
			n++
		}
	}
	return n
}

func failedWhy(t *contracts.Task, st *contracts.State) string {
	if n := failures(t); n >= 2 {
		return fmt.Sprintf("It failed to integrate %d times.", n)
	}
	if t.AssignedTo == "" {
		return "No coder holds it."
	}
	if a := st.Agents[t.AssignedTo]; a == nil || a.Host == "" {
		return fmt.Sprintf("Its coder %s has no supervisor running.", t.AssignedTo)
	}
	return ""
}

// tally counts the live and merged tasks by status: "2 MERGED, 1 UNCLAIMED".
func tally(st *contracts.State) string {
	n := map[contracts.Status]int{}
	for _, t := range st.Tasks {
		if t != nil {
			n[t.Status]++
		}
	}
	var parts []string
	for _, s := range contracts.AttentionOrder {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	if parts == nil {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "no reason given"
	}
	return s
}

func paren(s string) string {
	if s == "" || s == "by " {
		return ""
	}
	return " (" + s + ")"
}

// oneLine makes s one printable line.
func oneLine(s string) string {
	return contracts.Printable(strings.Join(strings.Fields(s), " "))
}

// clip cuts s to at most n bytes, on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "…"
	cut := n - len(more)
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// budgetKey is the budget a budget_exceeded reason names last, in
// parentheses ("goal_tokens"), or goal_tokens.
func budgetKey(reason string) string {
	i, j := strings.LastIndex(reason, "("), strings.LastIndex(reason, ")")
	if i < 0 || j < i {
		return "goal_tokens"
	}
	if k := reason[i+1 : j]; k == "goal_usd" {
		return k
	}
	return "goal_tokens"
}
