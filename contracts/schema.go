// Package contracts is the Liza contract as code: the blackboard schema, the
// task state machine, role permissions, validation and claimability. It knows
// nothing about git; every function here is a pure function of the state.
package contracts

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Extra keeps the fields a struct does not know, so that a state written by a
// newer tool or edited by hand survives every write unchanged.
type Extra = map[string]any

// State is the whole blackboard in the seed's state.yaml shape.
type State struct {
	Version        int                 `yaml:"version"`
	Goal           Goal                `yaml:"goal"`
	Config         Config              `yaml:"config"`
	Sprint         Sprint              `yaml:"sprint"`
	Control        *Control            `yaml:"control,omitempty"`
	CircuitBreaker *CircuitBreaker     `yaml:"circuit_breaker,omitempty"`
	Agents         map[string]*Agent   `yaml:"agents"`
	Tasks          []*Task             `yaml:"tasks"`
	Archive        []*Task             `yaml:"archive,omitempty"`
	Anomalies      []*Anomaly          `yaml:"anomalies,omitempty"`
	Discovered     []*Discovery        `yaml:"discovered,omitempty"`
	Handoff        map[string]*Handoff `yaml:"handoff,omitempty"`
	HumanNotes     []*HumanNote        `yaml:"human_notes,omitempty"`
	SpecChanges    []*SpecChange       `yaml:"spec_changes,omitempty"`
	Extra          Extra               `yaml:",inline"`
}

// Goal is the goal section.
type Goal struct {
	ID               string            `yaml:"id"`
	Description      string            `yaml:"description"`
	SpecRef          string            `yaml:"spec_ref,omitempty"`
	Status           string            `yaml:"status"`
	Created          string            `yaml:"created,omitempty"`
	Completed        string            `yaml:"completed,omitempty"`
	AlignmentHistory []*AlignmentEntry `yaml:"alignment_history,omitempty"`
	// Spend is what the goal's sessions have spent (RulesGoalSpend on):
	// every session recorded with usage since the goal started, a task's
	// and a planner's. Nil on a goal that has recorded none under those
	// rules (see GoalSpendUnder).
	Spend *Sum  `yaml:"spend,omitempty"`
	Extra Extra `yaml:",inline"`
}

// Sum is a Usage kept as a running sum on the board. It is a type of its
// own so that a sum of nothing is written as such: YAML leaves out a
// Usage that counts nothing (its IsZero), and a goal that has spent
// nothing is not a goal that keeps no figure.
type Sum Usage

// Plus is s with u added (see Usage.Add); a nil sum counts nothing.
func (s *Sum) Plus(u Usage) *Sum {
	var sum Usage
	if s != nil {
		sum = Usage(*s)
	}
	sum.Add(u)
	return (*Sum)(&sum)
}

// AlignmentEntry records how the plan moved relative to the goal: tasks
// added, rescoped, superseded.
type AlignmentEntry struct {
	Time   string     `yaml:"time"`
	Event  string     `yaml:"event"`
	Task   string     `yaml:"task,omitempty"`
	Tasks  StringList `yaml:"tasks,omitempty"`
	Agent  string     `yaml:"agent,omitempty"`
	Reason string     `yaml:"reason,omitempty"`
	Extra  Extra      `yaml:",inline"`
}

// Config holds the tunables. Zero values are filled from DefaultConfig.
type Config struct {
	MaxCoderIterations   int    `yaml:"max_coder_iterations"`
	MaxReviewCycles      int    `yaml:"max_review_cycles"`
	LeaseDuration        int    `yaml:"lease_duration"`
	HeartbeatInterval    int    `yaml:"heartbeat_interval"`
	CoderPollInterval    int    `yaml:"coder_poll_interval"`
	ReviewerPollInterval int    `yaml:"reviewer_poll_interval"`
	PlannerPollInterval  int    `yaml:"planner_poll_interval"`
	IntegrationBranch    string `yaml:"integration_branch"`
	// IntegrationTip is the commit the integration branch must be at: what
	// init started it at, then the merge_commit of each merge, or what the
	// operator adopted (rule set 3 on; empty on a board made before). It is
	// not a tunable: only those operations write it.
	IntegrationTip string `yaml:"integration_tip,omitempty"`
	// MaxInFlight bounds the tasks in flight (claimed and not yet merged)
	// at once; zero means DefaultMaxInFlight (see InFlightLimit).
	MaxInFlight int `yaml:"max_in_flight,omitempty"`
	// MergeBatch caps how many approved tasks the merge queue tests and
	// lands together (1: one at a time, as the seeds merge); zero means
	// DefaultMergeBatch (see MergeBatchLimit).
	MergeBatch int `yaml:"merge_batch,omitempty"`
	// The alarm thresholds, in seconds. Zero means the default (see
	// Config.StallAfter and the others); FillDefaults leaves them zero so
	// that a state that does not set them is written without them.
	StallThreshold           int `yaml:"stall_threshold,omitempty"`
	DraftStaleThreshold      int `yaml:"draft_stale_threshold,omitempty"`
	PauseStaleThreshold      int `yaml:"pause_stale_threshold,omitempty"`
	CheckpointStaleThreshold int `yaml:"checkpoint_stale_threshold,omitempty"`
	// ParkStaleThreshold is how long a parked task (see ParkOf) may wait
	// for its coder to come back before it raises an alarm.
	ParkStaleThreshold int `yaml:"park_stale_threshold,omitempty"`
	// The session timeboxes of seed 001, in seconds, by role: past its
	// timebox a supervisor asks the agent to stop (SIGINT), and after
	// timebox_grace more seconds makes it (SIGTERM). Zero means the default
	// (see Config.Timebox); like the thresholds they are written only when
	// set.
	TimeboxCoder        int `yaml:"timebox_coder,omitempty"`
	TimeboxCodeReviewer int `yaml:"timebox_code_reviewer,omitempty"`
	TimeboxPlanner      int `yaml:"timebox_planner,omitempty"`
	TimeboxGrace        int `yaml:"timebox_grace,omitempty"`
	// WorktreeSetupTimeout bounds scripts/worktree-setup.sh in each new
	// worktree, in seconds (see Config.SetupTimeout); zero is the default.
	WorktreeSetupTimeout int `yaml:"worktree_setup_timeout,omitempty"`
	// IntegrationTestTimeout bounds scripts/integration-test.sh at each
	// merge, in seconds (see Config.TestTimeout); zero is the default.
	IntegrationTestTimeout int `yaml:"integration_test_timeout,omitempty"`
	// Budgets are the hard spend budgets (see Budgets), Prices the price
	// table (USD per million tokens, by model) that costs a session whose
	// CLI reports no cost; both are written only when set.
	Budgets *Budgets         `yaml:"budgets,omitempty"`
	Prices  map[string]Price `yaml:"prices,omitempty"`
	Extra   Extra            `yaml:",inline"`
}

// DefaultConfig is the seeds' configuration.
func DefaultConfig() Config {
	return Config{
		MaxCoderIterations:   10,
		MaxReviewCycles:      5,
		LeaseDuration:        300, // seed 004: "Lease duration: 5 minutes (default)"
		HeartbeatInterval:    60,  // seed 004: "Heartbeat interval: 60 seconds"
		CoderPollInterval:    30,
		ReviewerPollInterval: 30,
		PlannerPollInterval:  30,
		IntegrationBranch:    "integration",
	}
}

// DefaultMaxInFlight is seed 001's window for work that writes: "write/mixed:
// window_size <= 12".
const DefaultMaxInFlight = 12

// InFlightLimit is max_in_flight, or DefaultMaxInFlight when the state sets
// none. Like the alarm thresholds, the default is not written into the
// state.
func (c Config) InFlightLimit() int {
	if c.MaxInFlight > 0 {
		return c.MaxInFlight
	}
	return DefaultMaxInFlight
}

// DefaultMergeBatch is the batch the merge queue tests at once when the
// state sets no merge_batch: with one task in eight breaking the test, the
// other seven land after five runs (the batch, three halvings, the rest).
const DefaultMergeBatch = 8

// MaxMergeBatch bounds merge_batch: a batch is one state commit whose
// verification merges each of its tasks again.
const MaxMergeBatch = 64

// MergeBatchLimit is merge_batch, or DefaultMergeBatch when the state sets
// none (not written into the state either).
func (c Config) MergeBatchLimit() int {
	if c.MergeBatch > 0 {
		return min(c.MergeBatch, MaxMergeBatch)
	}
	return DefaultMergeBatch
}

// FillDefaults sets every unset tunable to its seed default.
func (c *Config) FillDefaults() {
	d := DefaultConfig()
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	set(&c.MaxCoderIterations, d.MaxCoderIterations)
	set(&c.MaxReviewCycles, d.MaxReviewCycles)
	set(&c.LeaseDuration, d.LeaseDuration)
	set(&c.HeartbeatInterval, d.HeartbeatInterval)
	set(&c.CoderPollInterval, d.CoderPollInterval)
	set(&c.ReviewerPollInterval, d.ReviewerPollInterval)
	set(&c.PlannerPollInterval, d.PlannerPollInterval)
	if c.IntegrationBranch == "" {
		c.IntegrationBranch = d.IntegrationBranch
	}
}

// Sprint is the sprint section.
type Sprint struct {
	ID            string         `yaml:"id"`
	GoalRef       string         `yaml:"goal_ref"`
	Scope         SprintScope    `yaml:"scope"`
	Timeline      SprintTimeline `yaml:"timeline"`
	Status        string         `yaml:"status"`
	Metrics       Extra          `yaml:"metrics,omitempty"`
	Retrospective any            `yaml:"retrospective,omitempty"`
	Extra         Extra          `yaml:",inline"`
}

// SprintScope lists the tasks planned for the sprint and the stretch ones.
type SprintScope struct {
	Planned StringList `yaml:"planned"`
	Stretch StringList `yaml:"stretch"`
	Extra   Extra      `yaml:",inline"`
}

// SprintTimeline records when the sprint started, was checkpointed and ended.
type SprintTimeline struct {
	Started    string `yaml:"started,omitempty"`
	Deadline   string `yaml:"deadline,omitempty"`
	Checkpoint string `yaml:"checkpoint,omitempty"`
	Ended      string `yaml:"ended,omitempty"`
	Extra      Extra  `yaml:",inline"`
}

// Control holds the kill switches, so that they travel with the state to
// every clone.
type Control struct {
	Mode   string `yaml:"mode,omitempty"` // RUNNING, PAUSED, CHECKPOINT, ABORTED
	Since  string `yaml:"since,omitempty"`
	By     string `yaml:"by,omitempty"`
	Reason string `yaml:"reason,omitempty"`
	Extra  Extra  `yaml:",inline"`
}

// CircuitBreaker is the state of the systemic-failure detector.
type CircuitBreaker struct {
	Status string `yaml:"status"`
	// LastCheck is when analyze last looked.
	LastCheck   string `yaml:"last_check,omitempty"`
	TriggeredAt string `yaml:"triggered_at,omitempty"`
	// Severity is the severity class of the trigger's first pattern.
	Severity string `yaml:"severity,omitempty"`
	Patterns []any  `yaml:"patterns,omitempty"`
	Report   string `yaml:"report,omitempty"`
	// ReportFile is where the trigger's full report was written for the
	// human, relative to the project root.
	ReportFile string `yaml:"report_file,omitempty"`
	Resolution string `yaml:"resolution,omitempty"`
	ResolvedAt string `yaml:"resolved_at,omitempty"`
	// History has one entry per analyze run (the most recent
	// BreakerHistoryKeep; git log keeps the rest).
	History []*BreakerCheck `yaml:"history,omitempty"`
	Extra   Extra           `yaml:",inline"`
}

// BreakerCheck is one entry of circuit_breaker.history: what one analyze
// run found.
type BreakerCheck struct {
	Timestamp string `yaml:"timestamp"`
	// Result is BreakerOK, BreakerTriggered or BreakerResolved (the
	// patterns found had been resolved by the human).
	Result   string `yaml:"result"`
	Pattern  string `yaml:"pattern,omitempty"`
	Severity string `yaml:"severity,omitempty"`
	// Matches counts the patterns found; Pattern and Severity name the
	// first.
	Matches int   `yaml:"matches,omitempty"`
	Extra   Extra `yaml:",inline"`
}

// Agent is one entry of the agents section.
type Agent struct {
	Role         string `yaml:"role"`
	Status       string `yaml:"status"`
	CurrentTask  string `yaml:"current_task,omitempty"`
	LeaseExpires string `yaml:"lease_expires,omitempty"`
	Heartbeat    string `yaml:"heartbeat,omitempty"`
	Generation   int    `yaml:"generation,omitempty"`
	Started      string `yaml:"started,omitempty"`
	Host         string `yaml:"host,omitempty"`
	// SupervisorLease is held by the supervisor registered as this agent
	// (git liza agent) while it runs; a second registration of the same
	// id is refused until it ends.
	SupervisorLease string `yaml:"supervisor_lease,omitempty"`
	// NotesProcessed lists the human notes (numbered from 1, as git liza
	// note prints them) a planner has dealt with, so that they wake no
	// planner again.
	NotesProcessed []int `yaml:"notes_processed,omitempty,flow"`
	// StopReason says why the agent's last supervisor stopped, when it
	// stopped for something a person must see to (a crash loop, an
	// environment failure); a clean stop and the next registration leave
	// it empty.
	StopReason string `yaml:"stop_reason,omitempty"`
	// Spend sums the usage of the agent's sessions that had no task (a
	// planner's): they count toward the goal (GoalSpend) though no task's
	// history holds them.
	Spend *Usage `yaml:"spend,omitempty"`
	// GoalSpend is the part of Spend spent in the current goal
	// (RulesGoalSpend on; goal new clears it): what the goal's figure
	// (goal.spend) holds of the agent's sessions without a task, and what
	// the reports of the goal and its sprint count of them.
	GoalSpend *Sum  `yaml:"goal_spend,omitempty"`
	Extra     Extra `yaml:",inline"`
}

// Task is one task. Field names are the seed's.
type Task struct {
	ID                  string          `yaml:"id"`
	Description         string          `yaml:"description"`
	Status              Status          `yaml:"status"`
	Priority            int             `yaml:"priority"`
	Created             string          `yaml:"created,omitempty"`
	SpecRef             string          `yaml:"spec_ref,omitempty"`
	Docs                StringList      `yaml:"docs,omitempty"` // seed 002: at most MaxDocs more files to read
	DoneWhen            string          `yaml:"done_when,omitempty"`
	Scope               string          `yaml:"scope,omitempty"`
	DependsOn           StringList      `yaml:"depends_on"`
	Paths               StringList      `yaml:"paths,omitempty"`
	MaxFiles            int             `yaml:"max_files,omitempty"`
	MaxLOC              int             `yaml:"max_loc,omitempty"`
	AssignedTo          string          `yaml:"assigned_to,omitempty"`
	PreviousAssignee    string          `yaml:"previous_assignee,omitempty"`
	Worktree            string          `yaml:"worktree,omitempty"`
	BaseCommit          string          `yaml:"base_commit,omitempty"`
	LeaseExpires        string          `yaml:"lease_expires,omitempty"`
	Iteration           int             `yaml:"iteration"`
	ReviewCommit        string          `yaml:"review_commit,omitempty"`
	ReviewingBy         string          `yaml:"reviewing_by,omitempty"`
	ReviewLeaseExpires  string          `yaml:"review_lease_expires,omitempty"`
	ReviewCyclesCurrent int             `yaml:"review_cycles_current,omitempty"`
	ReviewCyclesTotal   int             `yaml:"review_cycles_total,omitempty"`
	RejectionReason     string          `yaml:"rejection_reason,omitempty"`
	RejectionFeedback   string          `yaml:"rejection_feedback,omitempty"`
	ApprovedBy          string          `yaml:"approved_by,omitempty"`
	MergeCommit         string          `yaml:"merge_commit,omitempty"`
	BlockedReason       string          `yaml:"blocked_reason,omitempty"`
	BlockedQuestions    StringList      `yaml:"blocked_questions,omitempty"`
	Attempted           StringList      `yaml:"attempted,omitempty"`
	FailedBy            StringList      `yaml:"failed_by,omitempty"`
	IntegrationFix      bool            `yaml:"integration_fix,omitempty"`
	HandoffPending      bool            `yaml:"handoff_pending,omitempty"`
	Supersedes          StringList      `yaml:"supersedes,omitempty"`
	SupersededBy        StringList      `yaml:"superseded_by,omitempty"`
	RescopeReason       string          `yaml:"rescope_reason,omitempty"`
	History             []*HistoryEvent `yaml:"history"`
	Extra               Extra           `yaml:",inline"`
}

// HistoryEvent is one entry of a task's append-only history.
type HistoryEvent struct {
	Time       string      `yaml:"time"`
	Event      string      `yaml:"event"`
	Agent      string      `yaml:"agent,omitempty"`
	From       string      `yaml:"from,omitempty"`
	To         string      `yaml:"to,omitempty"`
	Reason     string      `yaml:"reason,omitempty"`
	Commit     string      `yaml:"commit,omitempty"`
	Checkpoint *Checkpoint `yaml:"checkpoint,omitempty"`
	// Usage is what a session_ended event's session spent (see
	// SessionUsage); none on other events and on sessions recorded before
	// spend was.
	Usage *Usage `yaml:"usage,omitempty"`
	Extra Extra  `yaml:",inline"`
}

// Checkpoint is the pre-execution checkpoint a coder writes before work.
type Checkpoint struct {
	Intent        string     `yaml:"intent"`
	Assumptions   StringList `yaml:"assumptions,omitempty"`
	Risks         string     `yaml:"risks,omitempty"`
	Validation    string     `yaml:"validation"`
	FilesToModify StringList `yaml:"files_to_modify"`
	Extra         Extra      `yaml:",inline"`
}

// Anomaly is one entry of the anomalies section.
type Anomaly struct {
	ID        string `yaml:"id"`
	Type      string `yaml:"type"`
	TaskID    string `yaml:"task_id,omitempty"`
	LoggedBy  string `yaml:"logged_by"`
	Timestamp string `yaml:"timestamp"`
	Details   Extra  `yaml:"details,omitempty"`
	Extra     Extra  `yaml:",inline"`
}

// Discovery is an adjacent problem found during a task and logged, not fixed.
type Discovery struct {
	ID              string `yaml:"id"`
	By              string `yaml:"by"`
	During          string `yaml:"during,omitempty"`
	Description     string `yaml:"description"`
	Severity        string `yaml:"severity,omitempty"`
	Urgency         string `yaml:"urgency,omitempty"`
	Recommendation  string `yaml:"recommendation,omitempty"`
	ConvertedToTask string `yaml:"converted_to_task,omitempty"`
	Timestamp       string `yaml:"timestamp,omitempty"`
	Extra           Extra  `yaml:",inline"`
}

// Handoff is a coder's context-exhaustion handoff for one task.
type Handoff struct {
	Agent      string `yaml:"agent"`
	Time       string `yaml:"time"`
	Summary    string `yaml:"summary"`
	NextAction string `yaml:"next_action"`
	Extra      Extra  `yaml:",inline"`
}

// HumanNote is a message from a human to the agents.
type HumanNote struct {
	Timestamp string `yaml:"timestamp"`
	Message   string `yaml:"message"`
	For       string `yaml:"for,omitempty"`
	By        string `yaml:"by,omitempty"`
	Extra     Extra  `yaml:",inline"`
}

// SpecChange records a change to a spec after tasks were written against it.
type SpecChange struct {
	Timestamp   string `yaml:"timestamp"`
	Spec        string `yaml:"spec"`
	Change      string `yaml:"change"`
	TriggeredBy string `yaml:"triggered_by,omitempty"`
	Extra       Extra  `yaml:",inline"`
}

// StringList is a list of strings that also accepts a single scalar, as
// hand-edited seed files often write `depends_on: task-1`.
type StringList []string

// UnmarshalYAML accepts a sequence of scalars, a single scalar or null.
func (l *StringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			*l = nil
			return nil
		}
		*l = StringList{n.Value}
		return nil
	case yaml.SequenceNode:
		var s []string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = s
		return nil
	}
	return &yaml.TypeError{Errors: []string{"line " + strconv.Itoa(n.Line) + ": expected a list of strings"}}
}

// Contains reports whether s is in the list.
func (l StringList) Contains(s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}
