package ops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

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
	// Remote, in remote mode, says whose board this is a copy of and how
	// old the copy is.
	Remote *BoardRemote `json:"remote,omitempty"`
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
	}
	snap, err := s.Snapshot(ctx, r.Rev)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	obs, err := s.Observe(snap, r.Rev == "", now)
	if err != nil {
		return nil, err
	}
	if obs.State == nil {
		return nil, obs.Err
	}
	b := NewBoard(obs.State, now, r.BoardFilter)
	b.Switches, b.Alarms = obs.Switches, obs.Alarms
	b.Mode = contracts.EffectiveMode(obs.Switches)
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
	return b, nil
}

// refresh fetches remote's board and fast-forwards the local one to it
// when the local one is only behind (or absent); a local board with
// operations of its own is left for sync.
func (s *Service) refresh(ctx context.Context, remote string) error {
	theirs, ok, err := s.Store.FetchState(ctx, remote)
	if err != nil || !ok {
		return err
	}
	ours, has, err := s.Repo.ReadRef(refstore.StateRef)
	if err != nil || ours == theirs {
		return err
	}
	if has {
		if behind, err := s.Repo.IsAncestor(ctx, ours.String(), theirs.String()); err != nil || !behind {
			return err
		}
	}
	err = s.Repo.UpdateRefs(ctx, "liza: status --fetch from "+remote, refstore.RefUpdate{Name: refstore.StateRef, Old: ours, New: theirs})
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
		Tasks:             []BoardTask{}, Agents: []BoardAgent{},
		Switches: []contracts.Switch{}, Alarms: []contracts.Alarm{},
		Archived: len(st.Archive), Anomalies: len(st.Anomalies), Total: len(st.Tasks),
	}
	if st.Control != nil && st.Control.Mode != "" {
		b.Mode = st.Control.Mode
	}
	for _, t := range st.Tasks {
		bt := BoardTask{ID: t.ID, Status: t.Status, Priority: t.Priority, Description: t.Description,
			AssignedTo: t.AssignedTo, ReviewingBy: t.ReviewingBy, DependsOn: t.DependsOn, Reason: contracts.ReasonOf(t)}
		switch t.Status {
		case contracts.Claimed:
			bt.LeaseExpires = t.LeaseExpires
		case contracts.ReadyForReview:
			bt.LeaseExpires = t.ReviewLeaseExpires
		}
		bt.LeaseExpired = expired(bt.LeaseExpires, now)
		b.Counts[t.Status]++
		if f.keep(bt) {
			b.Tasks = append(b.Tasks, bt)
		}
	}
	SortByAttention(b.Tasks)
	for _, id := range slices.Sorted(maps.Keys(st.Agents)) {
		a := st.Agents[id]
		b.Agents = append(b.Agents, BoardAgent{ID: id, Role: a.Role, Status: a.Status, CurrentTask: a.CurrentTask,
			LeaseExpires: a.LeaseExpires, LeaseExpired: expired(a.LeaseExpires, now), Heartbeat: a.Heartbeat})
	}
	return b
}

// SortByAttention orders tasks as a person reads the board: by
// contracts.AttentionRank of their status, then by priority (1 first),
// then by id.
func SortByAttention(tasks []BoardTask) {
	slices.SortStableFunc(tasks, func(a, b BoardTask) int {
		return cmp.Or(
			cmp.Compare(contracts.AttentionRank(a.Status), contracts.AttentionRank(b.Status)),
			cmp.Compare(a.Priority, b.Priority),
			CompareIDs(a.ID, b.ID))
	})
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

// Sections groups a board's tasks by status, in attention order.
func (b *Board) Sections() []Section {
	var out []Section
	for _, t := range b.Tasks {
		if len(out) == 0 || out[len(out)-1].Status != t.Status {
			out = append(out, Section{Status: t.Status})
		}
		out[len(out)-1].Tasks = append(out[len(out)-1].Tasks, t)
	}
	return out
}

func expired(at string, now time.Time) bool {
	t, err := contracts.ParseTime(at)
	return at != "" && err == nil && !t.After(now)
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
