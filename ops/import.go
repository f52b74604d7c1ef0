package ops

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// ImportRequest replaces the state with a seed-format state.yaml.
type ImportRequest struct {
	Call
	Data []byte // the file's content
	Name string // where it came from, for messages and the commit subject
}

// kindImport is the kind of an import. Its effect is free (the state it
// brings is the input, which the commit does not repeat): an import is
// verified by what it may not do instead (see checkImport).
const kindImport = "import"

type importInput struct {
	Name string `json:"name"`
}

// ImportResult is what an import brought in.
type ImportResult struct {
	Tasks    int // live tasks
	Archived int
	Written
}

// Import makes a seed-format state the whole state, in one commit. It is
// the operator's repair tool, and it obeys the verifier: before anything
// is committed it runs the checks a guarded remote and validate --history
// run on an import (importKeeps: no task deleted, no history cut or
// edited, no finished task rewritten, no status moved as only an agent's
// step moves it, config.integration_branch unchanged), and the checks of
// this repository that validate makes on the tip (the spec files it names
// exist), and refuses what they would refuse. Its edits of live tasks and
// of the config are recorded as what they are: an edited event in the
// task's history, a config_changed entry in the goal's alignment history.
//
// It may replace a state that does not validate, or a history that does
// not verify: it is then checked against the state before the oldest
// commit that does not verify, the state it repairs. The integration
// branch is created at HEAD when the import is the board's first commit
// and the branch does not exist.
func (s *Service) Import(ctx context.Context, r ImportRequest) (*ImportResult, error) {
	path := r.Name
	parsed, err := parseImport(r.Data, path)
	if err != nil {
		return nil, err
	}
	_, head, err := s.Repo.Head()
	if err != nil {
		return nil, err
	}
	res, err := s.update(ctx, r.Call, cas.Op{
		Name:         contracts.OpImport,
		AllowMissing: true,
		Kind:         kindImport,
		Input:        mustJSON(importInput{Name: path}),
		Replace: func(tx *cas.Tx) (*contracts.State, error) {
			// A copy for each attempt: the records added below depend on
			// the tip the attempt builds on (recordImport copies what it
			// changes).
			st := &contracts.State{}
			*st = *parsed
			base, err := s.importBase(ctx, tx.Snap)
			if err != nil {
				return nil, err
			}
			if base != nil {
				if tx.Rules >= contracts.RulesImport {
					recordImport(base, st, tx.NowString())
				}
				if err := importKeeps(base, st, tx.Rules, tx.NowString()); err != nil {
					return nil, contracts.Invalidf("%s: %v", path, err)
				}
			}
			if err := s.importSpecs(base, st); err != nil {
				if Class(err) == contracts.CodeInvalid {
					return nil, contracts.Invalidf("%s: %v", path, err)
				}
				return nil, err
			}
			integ := "refs/heads/" + st.Config.IntegrationBranch
			if !tx.Snap.Exists() && !head.IsZero() {
				if _, ok, err := s.Repo.ReadRef(integ); err != nil {
					return nil, err
				} else if !ok {
					tx.MoveRef(refstore.RefUpdate{Name: integ, Old: refstore.ZeroID, New: head})
				}
			}
			tx.Describe(fmt.Sprintf("import %d tasks from %s", len(st.Tasks)+len(st.Archive), path), "")
			return st, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &ImportResult{Tasks: len(parsed.Tasks), Archived: len(parsed.Archive), Written: written(res)}, nil
}

// parseImport reads and validates an imported file.
func parseImport(data []byte, path string) (*contracts.State, error) {
	st, err := contracts.ParseState(data)
	if err != nil {
		return nil, contracts.Invalidf("%s: %v", path, err)
	}
	st.Config.FillDefaults()
	if st.Agents == nil {
		st.Agents = map[string]*contracts.Agent{}
	}
	if p := contracts.Validate(st); len(p) > 0 {
		msg := p[0].String()
		if len(p) > 1 {
			msg += fmt.Sprintf(" (and %d more problems)", len(p)-1)
		}
		return nil, contracts.Invalidf("%s does not validate: %s", path, msg)
	}
	return st, nil
}

// importBase is the state an import on snap is checked against: snap's,
// when every commit up to it verifies (as a clone verifies what it did not
// write before building on it); else the state before the oldest commit
// that does not, the state a repair restores, so that a repair may undo a
// forgery instead of being held to keep it. nil when there is none: the
// board's first import, or a board whose first commit does not verify.
func (s *Service) importBase(ctx context.Context, snap *cas.Snapshot) (*contracts.State, error) {
	if !snap.Exists() {
		return nil, nil
	}
	v := s.Verifier()
	v.Integration = s.localIntegration(snap.Commit)
	var bad *refstore.Commit
	if _, err := v.Chain(ctx, snap.Commit, s.Store.KnownGood, nil, func(c *refstore.Commit, _ error) {
		if bad == nil {
			bad = c
		}
	}); err != nil {
		return nil, err
	}
	if bad == nil {
		return snap.Load()
	}
	if len(bad.Parents) == 0 {
		return nil, nil
	}
	base, err := cas.ReadSnapshot(s.Repo, bad.Parents[0])
	if err != nil {
		return nil, err
	}
	return base.Load()
}

// importSpecs checks the spec files an import names anew (a new task's, a
// changed spec_ref, the goal's) against HEAD and the integration branch,
// as task add and task edit do; with no base, all of the live tasks'.
func (s *Service) importSpecs(base, st *contracts.State) error {
	old := map[string]string{}
	if base != nil {
		for _, t := range base.Tasks {
			old[t.ID] = t.SpecRef
		}
		if g := st.Goal.SpecRef; g != "" && g != base.Goal.SpecRef {
			if err := s.checkSpecAt(g, st.Config.IntegrationBranch); err != nil {
				return fmt.Errorf("goal: %w", err)
			}
		}
	}
	for _, t := range st.Tasks {
		if was, ok := old[t.ID]; t.SpecRef == "" || t.Status.Terminal() || ok && was == t.SpecRef {
			continue
		}
		if err := s.checkSpecAt(t.SpecRef, st.Config.IntegrationBranch); err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	return nil
}

// recordImport adds to next the records of what an import changes in
// prev as task edit and a config change would record it: an edited event
// in the history of each live task whose text it edits, and a
// config_changed entry in the goal's alignment history (importKeeps
// requires both). config.integration_branch is not recorded: it does not
// change by import. What it changes it copies first (a task, a list), so
// that next may share the rest with the parsed file.
func recordImport(prev, next *contracts.State, now string) {
	old := make(map[string]*contracts.Task, len(prev.Tasks))
	for _, t := range prev.Tasks {
		if !t.Status.Terminal() {
			old[t.ID] = t
		}
	}
	for _, list := range []*[]*contracts.Task{&next.Tasks, &next.Archive} {
		copied := false
		for i, t := range *list {
			ev := (*contracts.HistoryEvent)(nil)
			if o := old[t.ID]; o != nil {
				ev = importEdit(o, t, now)
			}
			if ev == nil {
				continue
			}
			if !copied {
				*list, copied = slices.Clone(*list), true
			}
			c := *t
			c.History = append(slices.Clone(t.History), ev)
			(*list)[i] = &c
		}
	}
	if e := importConfig(prev.Config, next.Config, now); e != nil {
		next.Goal.AlignmentHistory = append(slices.Clone(next.Goal.AlignmentHistory), e)
	}
}

// importEdit is the edited event an import that changes old's text into
// t's records, as task edit records it (the fields task edit changes,
// each from and to), or nil when the text is the same.
func importEdit(old, t *contracts.Task, now string) *contracts.HistoryEvent {
	changes := contracts.Extra{}
	text := func(name string, was, is any) {
		if was != is {
			changes[name] = contracts.Extra{"from": was, "to": is}
		}
	}
	list := func(name string, was, is contracts.StringList) {
		if !slices.Equal(was, is) {
			changes[name] = contracts.Extra{"from": []string(was), "to": []string(is)}
		}
	}
	text("description", old.Description, t.Description)
	text("spec_ref", old.SpecRef, t.SpecRef)
	text("done_when", old.DoneWhen, t.DoneWhen)
	text("scope", old.Scope, t.Scope)
	text("priority", old.Priority, t.Priority)
	text("max_files", old.MaxFiles, t.MaxFiles)
	text("max_loc", old.MaxLOC, t.MaxLOC)
	list("depends_on", old.DependsOn, t.DependsOn)
	list("paths", old.Paths, t.Paths)
	list("docs", old.Docs, t.Docs)
	if len(changes) == 0 {
		return nil
	}
	return &contracts.HistoryEvent{Time: now, Event: "edited", Agent: contracts.ActorName(""),
		Reason: importReason(changes), Extra: contracts.Extra{"changes": changes}}
}

// importConfig is the config_changed entry an import that changes the
// config from was to is records, or nil when only integration_branch
// differs (which importKeeps refuses) or nothing does.
func importConfig(was, is contracts.Config, now string) *contracts.AlignmentEntry {
	a, b := configFields(was), configFields(is)
	changes := contracts.Extra{}
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if k != "integration_branch" && !sameYAML(a[k], b[k]) {
			changes[k] = contracts.Extra{"from": a[k], "to": b[k]}
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok && k != "integration_branch" {
			changes[k] = contracts.Extra{"from": nil, "to": v}
		}
	}
	if len(changes) == 0 {
		return nil
	}
	return &contracts.AlignmentEntry{Time: now, Event: "config_changed", Agent: contracts.ActorName(""),
		Reason: importReason(changes), Extra: contracts.Extra{"changes": changes}}
}

// configFields is a config's fields by their names in the state file.
func configFields(c contracts.Config) map[string]any {
	out := map[string]any{}
	if b, err := contracts.EncodeYAML(&c); err == nil {
		_ = contracts.DecodeYAML(b, &out)
	}
	return out
}

// importReason names what an import changed.
func importReason(changes contracts.Extra) string {
	return "changed " + strings.Join(slices.Sorted(maps.Keys(changes)), ", ") + " (import)"
}
