package contracts

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Op is an operation on the blackboard, as permissions see it.
type Op string

// The operations.
const (
	OpInit       Op = "init"
	OpImport     Op = "import"
	OpAdd        Op = "add"
	OpEdit       Op = "edit"
	OpFinalize   Op = "finalize"
	OpClaim      Op = "claim"
	OpCheckpoint Op = "checkpoint"
	OpHeartbeat  Op = "heartbeat"
	OpSubmit     Op = "submit"
	OpHandoff    Op = "handoff"
	OpReview     Op = "review"
	OpVerdict    Op = "verdict"
	OpMerge      Op = "merge"
	OpBlock      Op = "block"
	OpUnblock    Op = "unblock"
	OpSupersede  Op = "supersede"
	OpAbandon    Op = "abandon"
	OpRelease    Op = "release"
	OpArchive    Op = "archive"
	OpAnomaly    Op = "anomaly"
	OpDiscover   Op = "discover"
	OpNote       Op = "note"
	OpPause      Op = "pause"
	OpResume     Op = "resume"
	OpAbort      Op = "abort"
	OpRegister   Op = "register"
	OpSprint     Op = "sprint"      // sprint checkpoint, metrics and analyze writes
	OpConvert    Op = "convert"     // a discovery becomes a task
	OpGoal       Op = "goal"        // the next goal and sprint on the same board
	OpAdopt      Op = "adopt"       // integration adopt: the branch's tip the operator accepts
	OpBudget     Op = "budget"      // set or clear config.budgets
	OpOverBudget Op = "over_budget" // a supervisor pauses the team for the goal's budget, which the board shows spent
)

// permissions says which roles may perform each operation (seeds 000 and
// 004, CLI.md). The human operator does what the seeds let humans do but
// never an agent's step.
var permissions = map[Op][]Role{
	OpInit:       {RoleHuman},
	OpImport:     {RoleHuman},
	OpAdd:        {RoleHuman, RolePlanner},
	OpEdit:       {RoleHuman, RolePlanner},
	OpFinalize:   {RoleHuman, RolePlanner},
	OpClaim:      {RoleCoder},
	OpCheckpoint: {RoleCoder},
	OpHeartbeat:  {RolePlanner, RoleCoder, RoleReviewer},
	OpSubmit:     {RoleCoder},
	OpHandoff:    {RoleCoder},
	OpReview:     {RoleReviewer},
	OpVerdict:    {RoleReviewer},
	OpMerge:      {RoleReviewer},
	OpBlock:      {RoleHuman, RolePlanner, RoleCoder},
	OpUnblock:    {RoleHuman, RolePlanner},
	OpSupersede:  {RoleHuman, RolePlanner},
	OpAbandon:    {RoleHuman, RolePlanner},
	OpRelease:    {RoleHuman, RolePlanner, RoleCoder, RoleReviewer}, // a coder its own claim, a reviewer its own review
	OpArchive:    {RoleHuman, RolePlanner},
	OpAnomaly:    {RoleHuman, RolePlanner, RoleCoder, RoleReviewer},
	OpDiscover:   {RoleHuman, RolePlanner, RoleCoder, RoleReviewer},
	OpNote:       {RoleHuman, RolePlanner, RoleCoder, RoleReviewer},
	OpPause:      {RoleHuman},
	OpResume:     {RoleHuman},
	OpAbort:      {RoleHuman},
	OpRegister:   {RolePlanner, RoleCoder, RoleReviewer},
	OpSprint:     {RoleHuman, RolePlanner},
	OpConvert:    {RoleHuman, RolePlanner},
	OpGoal:       {RoleHuman, RolePlanner},
	OpAdopt:      {RoleHuman},
	OpBudget:     {RoleHuman, RolePlanner},
	OpOverBudget: {RoleHuman, RolePlanner, RoleCoder, RoleReviewer},
}

// Ops lists every operation.
func Ops() []Op {
	return []Op{
		OpInit, OpImport, OpAdd, OpEdit, OpFinalize, OpClaim, OpCheckpoint,
		OpHeartbeat, OpSubmit, OpHandoff, OpReview, OpVerdict, OpMerge,
		OpBlock, OpUnblock, OpSupersede, OpAbandon, OpRelease, OpArchive,
		OpAnomaly, OpDiscover, OpNote, OpPause, OpResume, OpAbort,
		OpRegister, OpSprint, OpConvert, OpGoal, OpAdopt, OpBudget, OpOverBudget,
	}
}

// Allowed reports whether role may perform op.
func Allowed(role Role, op Op) bool {
	return hasRole(permissions[op], role)
}

func hasRole(roles []Role, r Role) bool {
	for _, v := range roles {
		if v == r {
			return true
		}
	}
	return false
}

// Permit returns an error (exit 1) unless the agent, or the human operator
// when agentID is empty, may perform op.
func Permit(agentID string, op Op) error {
	role, err := ParseAgentID(agentID)
	if err != nil {
		return err
	}
	if Allowed(role, op) {
		return nil
	}
	if role == RoleHuman {
		return Invalidf("the human operator may not %s: %s needs --agent or LIZA_AGENT_ID", op, op)
	}
	return Invalidf("%s (%s) may not %s (allowed: %s)", agentID, role.IDPrefix(), op, joinRoles(permissions[op]))
}

// joinRoles names roles as a person reads them (code-reviewer, not the
// state's code_reviewer).
func joinRoles(roles []Role) string {
	if len(roles) == 0 {
		return "nobody"
	}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = r.IDPrefix()
	}
	return strings.Join(names, ", ")
}

// AnomalyType describes one anomaly type of seed 004: the roles that log it
// and the detail keys it requires.
type AnomalyType struct {
	LoggedBy []Role
	Required []string
}

// AnomalyTypes are seed 004's anomaly types by name.
var AnomalyTypes = map[string]AnomalyType{
	"retry_loop":            {LoggedBy: []Role{RoleCoder, RoleReviewer}, Required: []string{"count", "error_pattern"}},
	"trade_off":             {LoggedBy: []Role{RoleCoder}, Required: []string{"what", "why", "debt_created"}},
	"spec_ambiguity":        {LoggedBy: []Role{RoleCoder}},
	"external_blocker":      {LoggedBy: []Role{RoleCoder}, Required: []string{"blocker_service"}},
	"assumption_violated":   {LoggedBy: []Role{RoleCoder, RoleReviewer}, Required: []string{"assumption", "reality"}},
	"scope_deviation":       {LoggedBy: []Role{RoleReviewer}},
	"workaround":            {LoggedBy: []Role{RoleReviewer}},
	"debt_created":          {LoggedBy: []Role{RoleReviewer}},
	"spec_changed":          {LoggedBy: []Role{RoleReviewer}},
	"hypothesis_exhaustion": {LoggedBy: []Role{RolePlanner}},
	"spec_gap":              {LoggedBy: []Role{RolePlanner}},
	"review_deadlock":       {LoggedBy: []Role{RolePlanner}},
	"system_ambiguity":      {LoggedBy: []Role{RolePlanner, RoleCoder, RoleReviewer}, Required: []string{"protocol_section", "question"}},
}

// CheckAnomaly returns an error (exit 1) unless role may log a, its type is
// known and the details seed 004's table requires of the type are present.
// The types the seed lists with no required field take none: a message
// detail saying what happened helps the reader, but an agent that follows
// the seed to the letter is not refused. (An earlier git-liza required one;
// dropping a requirement keeps every anomaly it recorded valid.) The tool's
// own anomalies (such as review_deadlock logged on a reviewer's verdict)
// skip the role check and are checked by Validate only.
func CheckAnomaly(a *Anomaly, role Role) error {
	if a == nil {
		return Invalidf("no anomaly")
	}
	t, ok := AnomalyTypes[a.Type]
	if !ok {
		return Invalidf("unknown anomaly type %q (known: %s)", a.Type, strings.Join(anomalyTypeNames(), ", "))
	}
	// The human operator is the escalation point and may log any type.
	if role != RoleHuman && !hasRole(t.LoggedBy, role) {
		return Invalidf("%s may not log %s anomalies (logged by: %s)", role.IDPrefix(), a.Type, joinRoles(t.LoggedBy))
	}
	if missing := missingDetails(a, t); len(missing) > 0 {
		return Invalidf("%s anomaly needs details %s", a.Type, strings.Join(missing, ", "))
	}
	return nil
}

// missingDetails lists the required detail keys of t that a lacks or leaves
// empty.
func missingDetails(a *Anomaly, t AnomalyType) []string {
	var missing []string
	for _, k := range t.Required {
		if v, ok := a.Details[k]; !ok || v == nil || fmt.Sprint(v) == "" {
			missing = append(missing, k)
		}
	}
	return missing
}

func anomalyTypeNames() []string {
	return slices.Sorted(maps.Keys(AnomalyTypes))
}

// typedDetails are the anomaly details that have a type other than text:
// counts are whole numbers, debt_created a boolean (seed 004's fields, as
// the circuit breaker reads them: debt_accumulation matches debt_created
// true, not the text "true").
var typedDetails = map[string]string{
	"count":        "int",
	"debt_created": "bool",
}

// TypeDetails returns details with the typed keys converted from the text
// a command line gives them ("3", "true") to their type, refusing values
// that are not of it (exit 1). Other keys are kept as they are.
func TypeDetails(details Extra) (Extra, error) {
	if len(details) == 0 {
		return details, nil
	}
	out := make(Extra, len(details))
	for k, v := range details {
		out[k] = v
		switch typedDetails[k] {
		case "int":
			n, ok := wholeNumber(v)
			if !ok {
				return nil, Invalidf("detail %s=%v: want a whole number", k, v)
			}
			out[k] = n
		case "bool":
			b, ok := boolean(v)
			if !ok {
				return nil, Invalidf("detail %s=%v: want true or false", k, v)
			}
			out[k] = b
		}
	}
	return out, nil
}

func wholeNumber(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, x >= 0
	case int64:
		return int(x), x >= 0
	case float64:
		return int(x), x >= 0 && x == float64(int(x))
	case string:
		s := strings.TrimSpace(x)
		if s == "" || len(s) > 9 {
			return 0, false
		}
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	return 0, false
}

func boolean(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}
