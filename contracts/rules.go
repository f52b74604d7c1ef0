package contracts

// The rule sets of the contract. Every state commit records the set it was
// made under (its Liza-Rules trailer; a commit without one was made under
// RulesFirst) and is verified under that set: a rule added later does not
// turn the commits an older git-liza made by the rules of their day into
// forgeries, and a board keeps its history valid across an upgrade. A
// commit may not go back to an older set than its parent's, and a guarded
// remote takes only commits made under the current one, so that nobody
// escapes a rule by claiming an older set for a new commit.
const (
	// RulesFirst is the contract as first recorded with the operations.
	RulesFirst = 1
	// RulesWhole is the whole contract (seeds 000-004 and the original's
	// scripts): the circuit breaker's history and anomaly patterns,
	// verdict escalation, hypothesis exhaustion, one active task per
	// coder, kill switches that gate claims, reviews and merges, agent
	// records kept true to what their agents hold, the seed's default
	// scope limit and window, the gates of finalize, sprint metrics on
	// merge.
	RulesWhole = 2
	// RulesContained is issue 23's containment. An import is held to what
	// it is, the operator's repair: it may not change
	// config.integration_branch (what a guarded remote protects), its
	// edits of a live task's text carry the edited event task edit would
	// write, its change of the config carries a config_changed entry in
	// the goal's alignment history, and it keeps that history's entries as
	// they were. A task's owned paths may not reach into .git, .liza/ or
	// .worktrees/. The board records where the integration branch must
	// be: init writes its starting commit in config.integration_tip, every
	// merge the commit it moves the branch to (and only from the recorded
	// one), and the operator's integration adopt the commit they accept;
	// every clone then refuses to build on, merge onto or follow a branch
	// that is anywhere else (unreviewed code pushed to a remote without
	// hooks, a forced rewind).
	RulesContained = 3
	// RulesImport and RulesIntegration name the parts of RulesContained.
	RulesImport      = RulesContained
	RulesIntegration = RulesContained
	// RulesLastMile is issue 27's set, the seeds in every corner. A
	// COMPLETED goal takes no new work: task add, finalize, unblock and
	// claim are refused until goal new starts the next goal, and an import
	// may not bring a completed goal live tasks. goal complete closes a
	// goal whose tasks are all terminal, whether or not one was merged.
	// And the records as the original computes them: every merge leaves
	// sprint.metrics equal to a full recomputation (as wt-merge.sh runs
	// update-sprint-metrics.sh after each merge), with seed 002's 5-loop
	// pause frequency; the anomalies the system logs while an agent acts
	// name that agent in logged_by, as every other anomaly does. And the
	// pre-execution checkpoint is mandatory (seed 000: "Before any
	// implementation, the agent MUST write a checkpoint"): submit refuses
	// a task whose current iteration has no checkpoint, a claim leaves its
	// coder STARTING on the task, and the checkpoint is what turns the
	// coder WORKING ("IDLE -> WORKING | Task claimed, checkpoint
	// written").
	RulesLastMile = 4
	// RulesGoalClosed and RulesMetered name parts of RulesLastMile.
	RulesGoalClosed = RulesLastMile
	RulesMetered    = RulesLastMile
	// RulesCheckpointed names the part about the checkpoint.
	RulesCheckpointed = RulesLastMile
	// RulesClaimIndex is issue 28's claim index: every operation keeps
	// the tasks in flight and the UNCLAIMED tasks in claim order in
	// claims/ (see cas/claims.go), so that a claim reads what it takes
	// rather than the whole board. A commit under an older set neither
	// writes nor reads it, so its replay makes the tree it made.
	RulesClaimIndex = 5
	// RulesQueueGroups keeps the claim queue in groups of small chunks
	// (claims/queued/<group>/<chunk>, see cas/claims_groups.go) rather
	// than one directory of larger ones, so that an operation on a board
	// of any size reads and writes a few small trees and one chunk. Its
	// first operation on a board that keeps the flat queue writes the
	// claim index whole.
	RulesQueueGroups = 6
	// RulesGoalSpend keeps the goal's spend on the goal (goal.spend):
	// every session recorded with usage adds to it, a task's and a
	// planner's, and goal new starts the next goal at zero. The goal's
	// budget holds that figure, where it held every session the board
	// ever recorded (the goals before included), so that a goal started
	// after one that went over its budget was paused for it at once.
	// A goal begun under an older set starts the figure, at its first
	// session, from what the older rules counted.
	RulesGoalSpend = 7
	// RulesSupervisorGone is about supervisors that end. A parked task
	// (ParkOf: its coder's supervisor stopped cleanly and let the lease
	// go) taken over by another coder does not count the coder that
	// parked it as one that failed it (failed_by, and the hypothesis
	// exhaustion two such coders make): two clean stops in a row blocked
	// a task for the planner. And a registration may take the id of a
	// supervisor its own machine saw end without unregistering (killed
	// outright) before that supervisor's lease runs out
	// (registerInput.ReplaceGone, naming the host string the board holds):
	// a new run could not start the agent for up to ten minutes.
	RulesSupervisorGone = 8
	// Rules is the set new operations follow.
	Rules = RulesSupervisorGone
)
