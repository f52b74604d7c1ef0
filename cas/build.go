package cas

// Building an operation: applying it to a snapshot and writing the objects
// of the new tree.

import (
	"encoding/json"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

// built is what an operation makes of a state: the new tree (the old one
// when nothing changed), the commit message, the result to report, the
// other refs to move with the state, and whether a request id had already
// been applied (then nothing else is set but value).
type built struct {
	tree     refstore.Hash
	msg      string
	now      time.Time
	value    json.RawMessage
	refs     []refstore.RefUpdate
	replayed bool
	// changed are the files of the board whose bells ring (tx.bells)
	// once it lands (nil: the whole board, every bell).
	changed []string
}

// build applies op to snap at now, for op.Agent, and writes the objects of
// the new tree. It is all of an operation but the commit and the
// compare-and-swap, so that a live write and a replay of a recorded one
// (Replay) make the same tree and message. rebuild, when not nil, is the
// tasks of a state whose stored indexes must be rebuilt. A state in layout
// 1 is written anew in layout 2 first (migrate), as part of the operation:
// the new tree is in layout 2 whatever the operation changed.
func (s *Store) build(snap *Snapshot, op Op, now time.Time, rebuild *Rebuild) (*built, error) {
	b := &built{tree: snap.Tree, now: now}
	tx := newTx(snap, now, op.Agent)
	tx.Rules = op.RulesOf()
	if value, done, err := tx.Requested(op); err != nil {
		return nil, err
	} else if done {
		b.value, b.replayed = value, true
		return b, nil
	}
	if snap.v1 && snap.Exists() && op.Replace == nil {
		migrated, err := s.migrate(snap)
		if err != nil {
			return nil, err
		}
		tx, rebuild = newTx(migrated, now, op.Agent), nil
		tx.Rules = op.RulesOf()
	}
	tx.rebuildIndex = rebuild
	if err := checkGeneration(tx, op); err != nil {
		return nil, err
	}
	var value any
	if op.Replace != nil {
		st, err := op.Replace(tx)
		if err != nil {
			return nil, err
		}
		ps := contracts.Validate(st)
		if tx.Rules >= contracts.RulesWhole {
			ps = append(ps, contracts.Leftovers(st)...)
		}
		if tx.Rules >= contracts.RulesGoalClosed {
			// A whole new state may not bring a COMPLETED goal live
			// tasks, which no operation makes under these rules.
			ps = append(ps, contracts.LateWork(st)...)
		}
		if err := problemsError(contracts.CodeInvalid, "", ps); err != nil {
			return nil, err
		}
		if b.tree, err = s.writeState(st, tx.Rules); err != nil {
			return nil, err
		}
	} else {
		var err error
		if value, err = op.Apply(tx); err != nil {
			return nil, err
		}
		if err := checkTx(tx); err != nil {
			return nil, err
		}
		if tx.chosen != nil {
			if inputDigest(Op{Kind: op.Kind, Input: tx.chosen}) != inputDigest(op) {
				return nil, contracts.Invalidf("%s chose an input that does not keep what was asked", op.Kind)
			}
			op.Input = tx.chosen
		}
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	b.value = raw
	if op.Request != "" {
		rec, _ := json.Marshal(requestRecord{Op: string(op.Name), Agent: op.Agent, Digest: inputDigest(op), Result: raw})
		tx.putRaw(requestPath(op.Request), rec)
	}
	if op.Replace == nil {
		if !tx.changed() {
			return b, nil
		}
		if b.tree, err = tx.writeTree(); err != nil {
			return nil, err
		}
	} else if op.Request != "" {
		snap2 := &Snapshot{Repo: s.Repo, Tree: b.tree, Commit: snap.Commit, dirs: map[string][]refstore.TreeEntry{}}
		if b.tree, err = applyFiles(snap2, "", map[string][]byte{locate2(requestPath(op.Request)): tx.raw[requestPath(op.Request)]}); err != nil {
			return nil, err
		}
	}
	b.msg = commitMessage(op, tx)
	if len(b.msg) > MaxCommit-4096 { // the headers take the rest
		return nil, contracts.Invalidf("the operation's input is %d bytes: a state commit records it, and holds at most %s", len(op.Input), refstore.ByteSize(MaxCommit))
	}
	b.refs = tx.refs
	if op.Replace == nil && !snap.v1 {
		b.changed = tx.bells()
	}
	return b, nil
}

// checkGeneration refuses an operation from a supervisor whose
// registration has been superseded, and a write without a generation as an
// agent that a live supervisor holds. Registration itself (and a person
// stopping a supervisor) is exempt: it has its own rules.
func checkGeneration(tx *Tx, op Op) error {
	if op.Agent == "" {
		if op.Generation != 0 {
			return contracts.Invalidf("a supervisor generation needs an agent id")
		}
		return nil
	}
	a, err := tx.Agent(op.Agent)
	if err != nil {
		return err
	}
	if op.Generation == 0 {
		if a == nil || op.Name == contracts.OpRegister || a.SupervisorLease == "" || contracts.LeaseOver(a.SupervisorLease, tx.Now) {
			return nil
		}
		return contracts.Invalidf("%s is run by a supervisor (generation %d on %s, until %s): its writes carry that generation (LIZA_AGENT_GENERATION); stop the supervisor to act as %s by hand",
			op.Agent, a.Generation, a.Host, a.SupervisorLease, op.Agent)
	}
	if a == nil {
		return contracts.Invalidf("%s is not registered (generation %d): its supervisor was stopped", op.Agent, op.Generation)
	}
	if a.Generation != op.Generation {
		return contracts.Invalidf("stale supervisor: %s is now generation %d, this process is generation %d", op.Agent, a.Generation, op.Generation)
	}
	return nil
}
