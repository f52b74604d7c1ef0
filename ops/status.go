package ops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// Board is the status view of the state: what a person reading the board
// needs, with absolute times (Now says when it was read).
type Board struct {
	Now               string `json:"now"`
	Goal              string `json:"goal"`
	GoalStatus        string `json:"goal_status"`
	Sprint            string `json:"sprint"`
	SprintStatus      string `json:"sprint_status"`
	Mode              string `json:"mode"`
	IntegrationBranch string `json:"integration_branch"`
	// Unverified, when set, says why the tip shown is not verified here
	// (see Observation.Unverified).
	Unverified string `json:"unverified,omitempty"`
	// Counts counts every live task by status, filtered or not.
	Counts map[contracts.Status]int `json:"counts"`
	// Total is the number of live tasks; Tasks holds those the filter let
	// through, in attention order (see contracts.AttentionOrder).
	Total     int                `json:"total"`
	Tasks     []BoardTask        `json:"tasks"`
	Agents    []BoardAgent       `json:"agents"`
	Archived  int                `json:"archived"`
	Anomalies int                `json:"anomalies"`
	Switches  []contracts.Switch `json:"switches"`
	Alarms    []contracts.Alarm  `json:"alarms"`
	// Spend is the sprint's spend, and the goal's against its budget;
	// none when no session recorded usage and the goal has no budget.
	Spend *BoardSpend `json:"spend,omitempty"`
	// Remote, in remote mode, says whose board this is a copy of and how
	// old the copy is.
	Remote *BoardRemote `json:"remote,omitempty"`
	// Unpublished counts the operations of the board's tip that the
	// remote it was last synced with does not have; none when it has
	// them all, or when this board was never synced.
	Unpublished *Unpublished `json:"unpublished,omitempty"`
	// Queue is the merge queue, on the board at its tip, when it holds
	// anything (approved tasks, a batch under test here).
	Queue *QueueView `json:"queue,omitempty"`
	// More, on a board cut to a page (Page), counts by status the tasks
	// the filter let through and the page left out; MoreAgents and
	// MoreAlarms, the agents and alarms CapLists left out.
	More       map[contracts.Status]int `json:"more,omitempty"`
	MoreAgents int                      `json:"more_agents,omitempty"`
	MoreAlarms int                      `json:"more_alarms,omitempty"`
}

// Unpublished is what a board holds that a remote lacks: git liza sync
// publishes it.
type Unpublished struct {
	Remote     string `json:"remote"`
	Operations int    `json:"operations"`
}

// BoardTask is one task on the board.
type BoardTask struct {
	ID          string           `json:"id"`
	Status      contracts.Status `json:"status"`
	Priority    int              `json:"priority"`
	Description string           `json:"description"`
	AssignedTo  string           `json:"assigned_to,omitempty"`
	ReviewingBy string           `json:"reviewing_by,omitempty"`
	// LeaseExpires is the lease that counts in the task's status: the
	// coder's while CLAIMED, the reviewer's while READY_FOR_REVIEW.
	LeaseExpires string   `json:"lease_expires,omitempty"`
	LeaseExpired bool     `json:"lease_expired,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	DependsOn    []string `json:"depends_on,omitempty"`
	// Parked, on a CLAIMED task, says its coder's supervisor stopped
	// cleanly: the lease ended on purpose and the work waits for the
	// coder to come back (see contracts.ParkOf).
	Parked *contracts.Park `json:"parked,omitempty"`
	// WaitsOn is the tasks of DependsOn not MERGED yet, on a task that is
	// not over: no coder may take it until they are.
	WaitsOn []Waiting `json:"waits_on,omitempty"`
}

// LeaseText is what a board shows of a task's lease: who parked it and
// how long ago, or how long the lease has to run.
func (t BoardTask) LeaseText(now time.Time) string {
	if t.Parked != nil {
		at, err := contracts.ParseTime(t.Parked.Since)
		if err != nil {
			return "parked"
		}
		return fmt.Sprintf("parked %s ago by %s", now.Sub(at).Round(time.Second), t.Parked.By)
	}
	return LeaseLeft(t.LeaseExpires, now)
}

// BoardAgent is one agent on the board.
type BoardAgent struct {
	ID           string `json:"id"`
	Role         string `json:"role"`
	Status       string `json:"status"`
	CurrentTask  string `json:"current_task,omitempty"`
	LeaseExpires string `json:"lease_expires,omitempty"`
	LeaseExpired bool   `json:"lease_expired,omitempty"`
	Heartbeat    string `json:"heartbeat,omitempty"`
}

// BoardRemote is the remote a board in remote mode is a copy of.
type BoardRemote struct {
	Name string `json:"name"`
	// FetchedAt is when this clone last fetched the remote's board
	// (empty: never); Fetched says this read fetched it.
	FetchedAt string `json:"fetched_at,omitempty"`
	Fetched   bool   `json:"fetched"`
	// Ahead says the local board has operations the remote lacks (made
	// --offline): git liza sync publishes them.
	Ahead bool `json:"ahead,omitempty"`
}

// BoardFilter selects the tasks of a board.
type BoardFilter struct {
	Statuses []contracts.Status // only these statuses; none: all
	Agent    string             // only tasks assigned to or reviewed by this agent
}

func (f BoardFilter) keep(t BoardTask) bool {
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, t.Status) {
		return false
	}
	return f.Agent == "" || t.AssignedTo == f.Agent || t.ReviewingBy == f.Agent
}

// StatusRequest says which board to read.
type StatusRequest struct {
	Rev string // a state commit; empty for the tip
	BoardFilter
	// Fetch, in remote mode, fetches the remote's board first and brings
	// the local copy up to it when it is only behind.
	Fetch bool
	// Limit, when not 0, is how many tasks of each status the caller
	// lists (of the finished ones, only when asked for by status): only
	// those are read whole, with those that may raise an alarm. Board.Tasks
	// still holds every task the filter lets through, the others with only
	// what the index says of them.
	Limit int
}

// Status is the board at r.Rev (or at the tip, with the kill-switch files
// of the main checkout, which count only there): tasks in attention order,
// agents and their leases, the sprint, kill switches and alarms. A state
// that cannot be read is an error.
func (s *Service) Status(ctx context.Context, r StatusRequest) (*Board, error) {
	var remote *BoardRemote
	if rem := s.remote(); rem != "" && r.Rev == "" {
		remote = &BoardRemote{Name: rem}
		if r.Fetch {
			if err := s.refresh(ctx, rem); err != nil {
				return nil, err
			}
			remote.Fetched = true
		}
		// Without --fetch, Snapshot brings a board that is only behind
		// the one last fetched up to it: an operation that fetched and
		// was refused left it there, and the time shown is that fetch's.
	}
	snap, err := s.Snapshot(ctx, r.Rev)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	listed, err := s.listed(snap, r, now)
	if err != nil {
		return nil, err
	}
	obs, err := s.Observe(ctx, ObserveRequest{Snap: snap, Tip: r.Rev == "", WithFiles: r.Rev == "", Now: now,
		Whole: func(x *contracts.TaskSummary) bool { return listed == nil || listed[x.ID] }})
	if err != nil {
		return nil, err
	}
	if obs.State == nil {
		return nil, obs.Err
	}
	b := NewBoard(obs.State, now, r.BoardFilter)
	if err := archived(snap, b); err != nil {
		return nil, err
	}
	b.Archived, b.Anomalies = obs.Archived, obs.Anomalies
	b.Switches, b.Alarms = obs.Switches, obs.Alarms
	b.Unverified = obs.Unverified
	b.Mode = contracts.EffectiveMode(obs.Switches)
	// A task file that cannot be read is the state's problem, which the
	// board reports as it does; it does not keep the board from showing.
	b.Spend, _ = boardSpend(snap, obs.State, now, s.spent)
	if r.Rev == "" {
		if q := s.queueView(obs.State); !q.Empty() {
			b.Queue = q
		}
	}
	if remote != nil {
		if at, ok := s.Store.LastFetch(remote.Name); ok {
			remote.FetchedAt = contracts.FormatTime(at)
		}
		theirs, _, err := s.Repo.ReadRef(refstore.TrackingRef(remote.Name, refstore.StateRef))
		if err != nil {
			return nil, err
		}
		if theirs != snap.Commit && !theirs.IsZero() {
			remote.Ahead, _ = s.Repo.IsAncestor(ctx, theirs.String(), snap.Commit.String())
		}
		b.Remote = remote
	}
	if r.Rev == "" {
		if b.Unpublished, err = s.unpublished(ctx, snap.Commit); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// unpublished counts the state commits of tip that the remote this board
// syncs with lacks: liza.remote's in remote mode (or offline), else the
// one remote this clone has synced with, if one; nil when there is
// nothing to publish. It costs a git process only when the tip differs
// from the remote's as last fetched.
func (s *Service) unpublished(ctx context.Context, tip refstore.Hash) (*Unpublished, error) {
	remote := s.Store.Remote
	if remote == "" {
		refs, err := s.Repo.RefsUnder(ctx, "refs/liza/remotes/")
		if err != nil {
			return nil, err
		}
		for name := range refs {
			rest, ok := strings.CutPrefix(name, "refs/liza/remotes/")
			r, isState := strings.CutSuffix(rest, "/state")
			if !ok || !isState || strings.Contains(r, "/") {
				continue
			}
			if remote != "" {
				return nil, nil // synced with several: none is the one
			}
			remote = r
		}
	}
	if remote == "" {
		return nil, nil
	}
	theirs, ok, err := s.Repo.ReadRef(refstore.TrackingRef(remote, refstore.StateRef))
	if err != nil || !ok || theirs == tip {
		return nil, err
	}
	out, err := s.Repo.Git(ctx, "rev-list", "--count", tip.String(), "^"+theirs.String())
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || n == 0 {
		return nil, err
	}
	return &Unpublished{Remote: remote, Operations: n}, nil
}

// listed is the set of live tasks a board of r lists, by their summaries:
// the first r.Limit of each status in attention order; nil for every task
// (no limit).
func (s *Service) listed(snap *cas.Snapshot, r StatusRequest, now time.Time) (map[string]bool, error) {
	if r.Limit <= 0 {
		return nil, nil
	}
	sums, err := snap.Summaries(cas.TasksDir)
	if err != nil {
		return nil, err
	}
	tasks := make([]BoardTask, 0, len(sums))
	for _, x := range sums {
		if bt := summaryTask(x, now); r.keep(bt) {
			tasks = append(tasks, bt)
		}
	}
	SortByAttention(tasks)
	kept, _ := pageOf(tasks, r.Limit, len(r.Statuses) > 0)
	out := make(map[string]bool, len(kept))
	for _, t := range kept {
		out[t.ID] = true
	}
	return out, nil
}

// Refresh, in remote mode, fetches the remote's board and brings this
// clone's to it when it is behind (as Status with Fetch does), without
// reading it: a viewer that reads the board only when it has moved.
func (s *Service) Refresh(ctx context.Context) error {
	if rem := s.remote(); rem != "" {
		return s.refresh(ctx, rem)
	}
	return nil
}

// refresh fetches remote's board and fast-forwards the local one to it
// when the local one is only behind (or absent); a local board with
// operations of its own is left for sync.
func (s *Service) refresh(ctx context.Context, remote string) error {
	theirs, ok, err := s.Store.FetchState(ctx, remote)
	if err != nil || !ok {
		return err
	}
	return s.forward(ctx, remote, theirs)
}

// catchUp is the board to read in remote mode, ours being this clone's
// tip: the remote's as last fetched when ours is only behind it (an
// operation that fetched and was then refused, or answered from its
// request id, moved only the tracking ref), else ours. The local board is
// brought to it on the way; a reader that may not move it (a sandbox that
// keeps the repository read-only) still reads the fetched board, which
// was verified when it was fetched.
func (s *Service) catchUp(ctx context.Context, remote string, ours refstore.Hash) (refstore.Hash, error) {
	theirs, ok, err := s.Repo.ReadRef(refstore.TrackingRef(remote, refstore.StateRef))
	if err != nil || !ok || theirs == ours {
		return ours, err
	}
	if behind, err := s.Repo.IsAncestor(ctx, ours.String(), theirs.String()); err != nil || !behind {
		return ours, err
	}
	_ = s.advance(ctx, remote, ours, theirs) // read either way; see above
	return theirs, nil
}

// forward fast-forwards the local board to theirs, remote's board, when
// the local one is only behind it (or absent).
func (s *Service) forward(ctx context.Context, remote string, theirs refstore.Hash) error {
	ours, has, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil || ours == theirs {
		return err
	}
	if has {
		if behind, err := s.Repo.IsAncestor(ctx, ours.String(), theirs.String()); err != nil || !behind {
			return err
		}
	}
	return s.advance(ctx, remote, ours, theirs)
}

// advance moves the local board from ours, found only behind, to theirs.
func (s *Service) advance(ctx context.Context, remote string, ours, theirs refstore.Hash) error {
	err := s.Repo.UpdateRefs(ctx, "liza: board from "+remote, refstore.RefUpdate{Name: refstore.StateRef, Old: ours, New: theirs})
	if errors.Is(err, refstore.ErrStale) {
		return nil // another process moved it meanwhile; it is at least as new
	}
	return err
}

// NewBoard is the board of st at now, without switches or alarms: the
// tasks f lets through, in attention order.
func NewBoard(st *contracts.State, now time.Time, f BoardFilter) *Board {
	b := &Board{
		Now:  contracts.FormatTime(now),
		Goal: st.Goal.ID + ": " + st.Goal.Description, GoalStatus: st.Goal.Status,
		Sprint: st.Sprint.ID, SprintStatus: st.Sprint.Status, Mode: "RUNNING",
		IntegrationBranch: st.Config.IntegrationBranch,
		Counts:            map[contracts.Status]int{},
		Tasks:             make([]BoardTask, 0, len(st.Tasks)), Agents: []BoardAgent{},
		Switches: []contracts.Switch{}, Alarms: []contracts.Alarm{},
		Archived: len(st.Archive), Anomalies: len(st.Anomalies), Total: len(st.Tasks),
	}
	if st.Control != nil && st.Control.Mode != "" {
		b.Mode = st.Control.Mode
	}
	live := make(map[string]contracts.Status, len(st.Tasks))
	for _, t := range st.Tasks {
		live[t.ID] = t.Status
	}
	for _, t := range st.Tasks {
		sum := t.Summary()
		bt := summaryTask(sum, now)
		bt.Description, bt.Reason = t.Description, contracts.ReasonOf(t)
		bt.WaitsOn = waitsOn(sum, live)
		if park, ok := contracts.ParkOf(t); ok {
			bt.Parked = &park
		}
		b.Counts[t.Status]++
		if f.keep(bt) {
			b.Tasks = append(b.Tasks, bt)
		}
	}
	SortByAttention(b.Tasks)
	for _, id := range slices.Sorted(maps.Keys(st.Agents)) {
		a := st.Agents[id]
		// An idle agent holds no lease of its own: its supervisor's says
		// how long the agent is there.
		lease := a.LeaseExpires
		if lease == "" {
			lease = a.SupervisorLease
		}
		b.Agents = append(b.Agents, BoardAgent{ID: id, Role: a.Role, Status: a.Status, CurrentTask: a.CurrentTask,
			LeaseExpires: lease, LeaseExpired: expired(lease, now), Heartbeat: a.Heartbeat})
	}
	return b
}

// summaryTask is what a board shows of a task from its summary: all but
// its description and reason.
func summaryTask(x *contracts.TaskSummary, now time.Time) BoardTask {
	bt := BoardTask{ID: x.ID, Status: x.Status, Priority: x.Priority,
		AssignedTo: x.AssignedTo, ReviewingBy: x.ReviewingBy, DependsOn: x.DependsOn}
	switch x.Status {
	case contracts.Claimed:
		bt.LeaseExpires = x.LeaseExpires
	case contracts.ReadyForReview:
		bt.LeaseExpires = x.ReviewLeaseExpires
	}
	bt.LeaseExpired = expired(bt.LeaseExpires, now)
	return bt
}

// SortByAttention orders tasks as a person reads the board: by
// contracts.AttentionRank of their status, then by priority (1 first),
// then by id (CompareIDs, then byte order, so that task-01 and task-1
// fall the same way whatever order they came in).
//
// What is compared is a small key per task, and the tasks are moved once
// at the end: a board of 50,000 tasks moved whole structs a few million
// times through a stable sort's rotations.
func SortByAttention(tasks []BoardTask) {
	type key struct {
		rank, priority int
		id             string
		at             int
	}
	keys := make([]key, len(tasks))
	for i, t := range tasks {
		keys[i] = key{contracts.AttentionRank(t.Status), t.Priority, t.ID, i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(
			cmp.Compare(a.rank, b.rank),
			cmp.Compare(a.priority, b.priority),
			CompareIDs(a.id, b.id),
			strings.Compare(a.id, b.id),
			cmp.Compare(a.at, b.at))
	})
	sorted := make([]BoardTask, len(tasks))
	for i, k := range keys {
		sorted[i] = tasks[k.at]
	}
	copy(tasks, sorted)
}

// CompareIDs orders ids as a person counts: the runs of digits in them by
// their value, so that task-9 comes before task-10.
func CompareIDs(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), cmp.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digits is the length of the run of ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Section is the tasks of one status, in a board's order.
type Section struct {
	Status contracts.Status
	Tasks  []BoardTask
}

// Sections groups a board's tasks by status, in attention order. Each
// section is a window on b.Tasks, capped so that an append copies.
func (b *Board) Sections() []Section { return sections(b.Tasks) }

func sections(tasks []BoardTask) []Section {
	var out []Section
	start := 0
	for i := 1; i <= len(tasks); i++ {
		if i == len(tasks) || tasks[i].Status != tasks[start].Status {
			out = append(out, Section{Status: tasks[start].Status, Tasks: tasks[start:i:i]})
			start = i
		}
	}
	return out
}

// Page cuts b.Tasks to what git liza status lists (pageOf), and counts
// in More what it left out.
func (b *Board) Page(limit int, asked bool) {
	b.Tasks, b.More = pageOf(b.Tasks, limit, asked)
}

// pageOf is what a board lists of tasks in attention order, the rule
// Status reads whole by (listed) and Page cuts by: the first limit tasks
// of each status (0: all of them), and of a finished status none unless
// asked says the statuses were asked for. It gives the tasks kept and,
// by status, how many it left out (nil: none).
func pageOf(tasks []BoardTask, limit int, asked bool) ([]BoardTask, map[contracts.Status]int) {
	kept := []BoardTask{}
	var more map[contracts.Status]int
	for _, sec := range sections(tasks) {
		n := len(sec.Tasks)
		if sec.Status.Terminal() && !asked {
			n = 0
		} else if limit > 0 {
			n = min(n, limit)
		}
		kept = append(kept, sec.Tasks[:n]...)
		if left := len(sec.Tasks) - n; left > 0 {
			if more == nil {
				more = map[contracts.Status]int{}
			}
			more[sec.Status] = left
		}
	}
	return kept, more
}

// CapLists keeps at most n of b's agents (in id order) and n of its
// alarms (the critical ones first, then in key order), and counts what
// it left out.
func (b *Board) CapLists(n int) {
	if len(b.Agents) > n {
		b.MoreAgents = len(b.Agents) - n
		b.Agents = b.Agents[:n:n]
	}
	if len(b.Alarms) > n {
		alarms := slices.Clone(b.Alarms)
		slices.SortStableFunc(alarms, func(x, y contracts.Alarm) int {
			return cmp.Compare(alarmRank(x.Level), alarmRank(y.Level))
		})
		b.MoreAlarms = len(alarms) - n
		b.Alarms = alarms[:n:n]
	}
}

func alarmRank(level string) int {
	if level == contracts.AlarmCritical {
		return 0
	}
	return 1
}

// expired says a lease time has passed; no lease, or one that does not
// read as a time, has not.
func expired(at string, now time.Time) bool {
	if at == "" {
		return false
	}
	t, err := contracts.ParseTime(at)
	return err == nil && !t.After(now)
}

// LeaseLeft says how long a lease has to run, or that it expired.
func LeaseLeft(expires string, now time.Time) string {
	if expires == "" {
		return ""
	}
	t, err := contracts.ParseTime(expires)
	if err != nil {
		return "lease unreadable"
	}
	d := t.Sub(now).Round(time.Second)
	if d <= 0 {
		return fmt.Sprintf("expired %s ago", -d)
	}
	return fmt.Sprintf("%s left", d)
}
