package ops

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// EntryResult is what anomaly, discover and note report, kept with the
// request id so that a replayed request reports the first result.
type EntryResult struct {
	ID       string `json:"id,omitempty"`
	N        int    `json:"n"`
	Type     string `json:"type,omitempty"`
	Task     string `json:"task,omitempty"`
	For      string `json:"for,omitempty"`
	By       string `json:"by"`
	Severity string `json:"severity,omitempty"`
	Urgency  string `json:"urgency,omitempty"`
	Written  `json:"-"`
}

// knownTask returns an error unless id names a live or an archived task.
func knownTask(tx *cas.Tx, id string) error {
	if err := contracts.ValidTaskID(id); err != nil {
		return err
	}
	live, archived, err := tx.HasTask(id)
	if err != nil {
		return err
	}
	if !live && !archived {
		return contracts.Invalidf("no task %s", id)
	}
	return nil
}

// AnomalyRequest logs an anomaly of one of seed 004's types.
type AnomalyRequest struct {
	Call
	Type    string
	Task    string
	Details contracts.Extra // the type's required keys must be present
}

// Anomaly logs an anomaly against a task.
func (s *Service) Anomaly(ctx context.Context, r AnomalyRequest) (*EntryResult, error) {
	typ, task, details := r.Type, r.Task, r.Details
	if task == "" {
		return nil, contracts.Invalidf("anomaly needs --task")
	}
	if err := contracts.ValidTaskID(task); err != nil {
		return nil, err
	}
	// Typed details (count, debt_created) are recorded as their type.
	details, err := contracts.TypeDetails(details)
	if err != nil {
		return nil, err
	}
	// The operation checks the same again when it applies (and when it is
	// replayed); checked here, a refusal costs no attempt.
	role, _ := contracts.ParseAgentID(s.Agent)
	if err := contracts.CheckAnomaly(&contracts.Anomaly{Type: typ, TaskID: task, Details: details}, role); err != nil {
		return nil, err
	}
	return writeAs[EntryResult](ctx, s, r.Call, kindAnomaly, anomalyInput{Type: typ, Task: task, Details: details}, nil)
}

type anomalyInput struct {
	Type    string          `json:"type"`
	Task    string          `json:"task"`
	Details contracts.Extra `json:"details,omitempty"`
}

var kindAnomaly = def("anomaly", contracts.OpAnomaly, func(tx *cas.Tx, in *anomalyInput) (any, error) {
	role, _ := contracts.ParseAgentID(tx.Actor)
	details := wholeNumbers(in.Details)
	if tx.Rules >= contracts.RulesWhole {
		var err error
		if details, err = contracts.TypeDetails(details); err != nil {
			return nil, err
		}
	}
	an := &contracts.Anomaly{Type: in.Type, TaskID: in.Task, LoggedBy: contracts.ActorName(tx.Actor), Timestamp: tx.NowString(), Details: details}
	if err := contracts.CheckAnomaly(an, role); err != nil {
		return nil, err
	}
	if err := knownTask(tx, in.Task); err != nil {
		return nil, err
	}
	n, err := tx.ListLen(cas.ListAnomalies)
	if err != nil {
		return nil, err
	}
	an.ID = fmt.Sprintf("anomaly-%d", n+1)
	if n, err = tx.Append(cas.ListAnomalies, an); err != nil {
		return nil, err
	}
	tx.Describe(fmt.Sprintf("anomaly %s on %s%s", in.Type, in.Task, by(tx.Actor)), in.Task)
	return EntryResult{ID: an.ID, N: n, Type: in.Type, Task: in.Task, By: an.LoggedBy}, nil
})

// DiscoverRequest logs a problem found during a task, without fixing it.
type DiscoverRequest struct {
	Call
	Description    string
	Severity       string // critical, high, medium, low, or empty
	Urgency        string // deferred (the default) or immediate
	Recommendation string
	// Task is the task it was found during; empty for the agent's current
	// task.
	Task string
}

// Discover logs a discovery.
func (s *Service) Discover(ctx context.Context, r DiscoverRequest) (*EntryResult, error) {
	d := &contracts.Discovery{
		Description:    strings.TrimSpace(r.Description),
		Severity:       r.Severity,
		Urgency:        r.Urgency,
		Recommendation: strings.TrimSpace(r.Recommendation),
	}
	if d.Urgency == "" {
		d.Urgency = "deferred"
	}
	task := r.Task
	if d.Description == "" {
		return nil, contracts.Invalidf("discover needs --desc")
	}
	if d.Severity != "" && !slices.Contains(contracts.Severities, d.Severity) {
		return nil, contracts.Invalidf("--severity %q: want one of %s", d.Severity, strings.Join(contracts.Severities, ", "))
	}
	if !slices.Contains(contracts.Urgencies, d.Urgency) {
		return nil, contracts.Invalidf("--urgency %q: want deferred or immediate", d.Urgency)
	}
	if task != "" {
		if err := contracts.ValidTaskID(task); err != nil {
			return nil, err
		}
	}
	return writeAs[EntryResult](ctx, s, r.Call, kindDiscover, discoverInput{Discovery: *d, Task: task}, nil)
}

type discoverInput struct {
	Discovery contracts.Discovery `json:"discovery"`
	Task      string              `json:"task,omitempty"`
}

var kindDiscover = def("discover", contracts.OpDiscover, func(tx *cas.Tx, in *discoverInput) (any, error) {
	task := in.Task
	nd := in.Discovery
	nd.By = contracts.ActorName(tx.Actor)
	nd.Timestamp = tx.NowString()
	nd.During = task
	if task != "" {
		if err := knownTask(tx, task); err != nil {
			return nil, err
		}
	} else if tx.Actor != "" {
		a, err := tx.Agent(tx.Actor)
		if err != nil {
			return nil, err
		}
		if a != nil {
			nd.During = a.CurrentTask
		}
	}
	n, err := tx.ListLen(cas.ListDiscovered)
	if err != nil {
		return nil, err
	}
	nd.ID = fmt.Sprintf("disc-%d", n+1)
	if n, err = tx.Append(cas.ListDiscovered, &nd); err != nil {
		return nil, err
	}
	subject := "discover " + nd.ID
	if nd.During != "" {
		subject += " during " + nd.During
	}
	tx.Describe(subject+by(tx.Actor), nd.During)
	return EntryResult{ID: nd.ID, N: n, Task: nd.During, By: nd.By, Severity: nd.Severity, Urgency: nd.Urgency}, nil
})

// NoteRequest leaves a human note for the agents.
type NoteRequest struct {
	Call
	Message string
	// For is the task or agent the note is for; empty for everyone.
	For string
}

// Note appends a note to human_notes.
func (s *Service) Note(ctx context.Context, r NoteRequest) (*EntryResult, error) {
	msg := strings.TrimSpace(r.Message)
	if msg == "" {
		return nil, contracts.Invalidf("note needs a message")
	}
	target := r.For
	if target != "" {
		if err := contracts.ValidID(target); err != nil {
			return nil, contracts.Invalidf("--for %s names no task and no agent", target)
		}
	}
	return writeAs[EntryResult](ctx, s, r.Call, kindNote, noteInput{Message: msg, For: target}, nil)
}

type noteInput struct {
	Message string `json:"message"`
	For     string `json:"for,omitempty"`
}

var kindNote = def("note", contracts.OpNote, func(tx *cas.Tx, in *noteInput) (any, error) {
	target := in.For
	isTask := false
	if target != "" {
		live, archived, err := tx.HasTask(target)
		if err != nil {
			return nil, err
		}
		isTask = live || archived
		if _, err := contracts.ParseAgentID(target); !isTask && err != nil {
			return nil, contracts.Invalidf("--for %s names no task and no agent", target)
		}
	}
	hn := &contracts.HumanNote{Timestamp: tx.NowString(), Message: in.Message, For: target, By: contracts.ActorName(tx.Actor)}
	n, err := tx.Append(cas.ListHumanNotes, hn)
	if err != nil {
		return nil, err
	}
	subject, task := "note", ""
	if target != "" {
		subject += " for " + target
	}
	if isTask {
		task = target
	}
	tx.Describe(subject+by(tx.Actor), task)
	return EntryResult{N: n, For: target, By: hn.By}, nil
})

// NotesDoneRequest marks human notes processed by the planner.
type NotesDoneRequest struct {
	Call
	Notes []int // note numbers, from 1
}

// NotesDoneResult lists the notes newly marked.
type NotesDoneResult struct {
	Agent     string `json:"agent"`
	Processed []int  `json:"processed"`
	Written   `json:"-"`
}

// NotesDone records on the planner's entry that it has dealt with the
// given human notes, so that they wake no planner again (seed 000: the
// planner clears the notes it has processed; the notes themselves stay, as
// the coders they are for still read them). Marking a note twice changes
// nothing.
func (s *Service) NotesDone(ctx context.Context, r NotesDoneRequest) (*NotesDoneResult, error) {
	if role, _ := contracts.ParseAgentID(s.Agent); role != contracts.RolePlanner {
		return nil, contracts.Invalidf("only a planner marks notes processed (git liza --agent planner-N note --done N)")
	}
	return writeAs[NotesDoneResult](ctx, s, r.Call, kindNotesDone, notesDoneInput{Notes: r.Notes}, nil)
}

type notesDoneInput struct {
	Notes []int `json:"notes"`
}

var kindNotesDone = def("notes_done", contracts.OpNote, func(tx *cas.Tx, in *notesDoneInput) (any, error) {
	agent := tx.Actor
	if role, _ := contracts.ParseAgentID(agent); role != contracts.RolePlanner {
		return nil, contracts.Invalidf("only a planner marks notes processed (git liza --agent planner-N note --done N)")
	}
	count, err := tx.ListLen(cas.ListHumanNotes)
	if err != nil {
		return nil, err
	}
	a, err := tx.Agent(agent)
	if err != nil {
		return nil, err
	}
	if a == nil {
		a = &contracts.Agent{Role: string(contracts.RolePlanner), Status: "IDLE", Started: tx.NowString()}
	}
	added := []int{}
	for _, n := range in.Notes {
		if n < 1 || n > count {
			return nil, contracts.Invalidf("no note %d (there are %s)", n, contracts.Plural(count, "note"))
		}
		if !slices.Contains(a.NotesProcessed, n) && !slices.Contains(added, n) {
			added = append(added, n)
		}
	}
	if len(added) > 0 {
		a.NotesProcessed = append(a.NotesProcessed, added...)
		slices.Sort(a.NotesProcessed)
		tx.PutAgent(agent, a)
		tx.Describe(fmt.Sprintf("%s processed (%s)", NoteList(added), agent), "")
	}
	return map[string]any{"agent": agent, "processed": added}, nil
})

// NoteList names notes: "note 2", "notes 1, 3".
func NoteList(ns []int) string {
	words := make([]string, len(ns))
	for i, n := range ns {
		words[i] = strconv.Itoa(n)
	}
	if len(ns) == 1 {
		return "note " + words[0]
	}
	return "notes " + strings.Join(words, ", ")
}
