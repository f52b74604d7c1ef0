package ops

import (
	"context"
	"encoding/json"
	"math"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// A kind is one kind of write. Its effect is a function of the state it
// reads, the actor (tx.Actor), the time (tx.Now) and its input, and of
// nothing else: no git, no files, no clock of its own. Every state commit
// records its kind and input (the Liza-Kind and Liza-Input trailers), so
// that anyone holding the parent state can apply the same kind to the same
// input at the commit's time and check that the commit's tree and message
// are exactly what that makes (Verify): a commit whose change does not
// follow from its label is refused, whatever its trailers say. What an
// operation learns from git before it writes (the integration tip a claim
// starts from, the commit a coder submits, the merge a reviewer built) is
// part of its input, and checked against git where the commit is verified
// (a kind's facts).
type kind struct {
	name string
	op   contracts.Op
	// apply makes the change on tx from the JSON input.
	apply func(tx *cas.Tx, in json.RawMessage) (any, error)
	// facts checks what the input says of git beyond the state, where a
	// commit of this kind is verified; nil when it says nothing.
	facts func(ctx context.Context, v *Verifier, parent *cas.Tx, in json.RawMessage) error
	// prepare runs before a recorded write of this kind is applied again
	// on another tip (sync): what the live operation did outside the state
	// that the new tip needs (publishing the submitted branch).
	prepare func(ctx context.Context, s *Service, in json.RawMessage) error
}

// kinds are the kinds of write, by name.
var kinds = map[string]*kind{}

// def declares a kind whose input is a T.
func def[T any](name string, op contracts.Op, apply func(tx *cas.Tx, in *T) (any, error)) *kind {
	k := &kind{name: name, op: op, apply: func(tx *cas.Tx, raw json.RawMessage) (any, error) {
		in, err := decodeInput[T](name, raw)
		if err != nil {
			return nil, err
		}
		return apply(tx, in)
	}}
	kinds[name] = k
	return k
}

// withFacts sets the facts check of a kind whose input is a T.
func withFacts[T any](k *kind, facts func(ctx context.Context, v *Verifier, parent *cas.Tx, in *T) error) {
	k.facts = func(ctx context.Context, v *Verifier, parent *cas.Tx, raw json.RawMessage) error {
		in, err := decodeInput[T](k.name, raw)
		if err != nil {
			return err
		}
		return facts(ctx, v, parent, in)
	}
}

// withPrepare sets the preparation of a recorded write of a kind whose
// input is a T.
func withPrepare[T any](k *kind, prepare func(ctx context.Context, s *Service, in *T) error) {
	k.prepare = func(ctx context.Context, s *Service, raw json.RawMessage) error {
		in, err := decodeInput[T](k.name, raw)
		if err != nil {
			return err
		}
		return prepare(ctx, s, in)
	}
}

func decodeInput[T any](name string, raw json.RawMessage) (*T, error) {
	in := new(T)
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, in); err != nil {
			return nil, contracts.Invalidf("%s: its recorded input does not read: %v", name, err)
		}
	}
	return in, nil
}

// write runs a kind for the service's actor with in as its input. The
// input is recorded as JSON and the effect is applied to what was recorded,
// so that a live write and its replay read the same input. live, when
// set, runs inside each attempt before the effect: a check of git that only
// the live write makes (a replay checks the kind's facts instead).
func (s *Service) write(ctx context.Context, call Call, k *kind, in any, live func(tx *cas.Tx) error) (*cas.Result, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return s.update(ctx, call, s.recorded(k, raw, live))
}

// writeChosen is write for an operation that chooses what it does on the
// state it applies to: choose runs inside the compare-and-swap, on each
// attempt, and the input it returns (which keeps asked, the input as asked)
// is recorded and applied. A claim without a worktree picks its task and
// base so, in one read of the board instead of a read to plan and another
// to write.
func (s *Service) writeChosen(ctx context.Context, call Call, k *kind, asked any, choose func(tx *cas.Tx) (any, error)) (*cas.Result, error) {
	raw, err := json.Marshal(asked)
	if err != nil {
		return nil, err
	}
	return s.update(ctx, call, cas.Op{Name: k.op, Kind: k.name, Input: raw, Apply: func(tx *cas.Tx) (any, error) {
		in, err := choose(tx)
		if err != nil {
			return nil, err
		}
		chosen, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		tx.Choose(chosen)
		return k.apply(tx, chosen)
	}})
}

// recorded is the cas.Op of a kind with a recorded input, for the
// service's actor.
func (s *Service) recorded(k *kind, raw json.RawMessage, live func(tx *cas.Tx) error) cas.Op {
	return cas.Op{Name: k.op, Kind: k.name, Input: raw, Apply: func(tx *cas.Tx) (any, error) {
		if live != nil {
			if err := live(tx); err != nil {
				return nil, err
			}
		}
		return k.apply(tx, raw)
	}}
}

// wholeNumbers turns the whole numbers a JSON decoding made float64 back
// into ints: anomaly details are written as ints (count=3) and must read
// back the same from a recorded input.
func wholeNumbers(e contracts.Extra) contracts.Extra {
	for k, v := range e {
		if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			e[k] = int(f)
		}
	}
	return e
}

// requested returns the first result of a request id that a write of kind
// k with input in (as asked) has already used, for the operations that
// choose what they do before they write and so must ask first.
func (s *Service) requested(ctx context.Context, call Call, k *kind, in any) (*cas.Result, bool, error) {
	if call.RequestID == "" {
		return nil, false, nil
	}
	if err := cas.ValidRequestID(call.RequestID); err != nil {
		return nil, false, err
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, false, err
	}
	var out *cas.Result
	err = s.view(ctx, func(tx *cas.Tx) error {
		value, done, err := tx.Requested(cas.Op{Name: k.op, Agent: s.Agent, Request: call.RequestID, Kind: k.name, Input: raw})
		if done {
			out = &cas.Result{Commit: tx.Snap.Commit, Value: value, Replayed: true}
		}
		return err
	})
	return out, out != nil, err
}

// since makes k an operation of rule set rules and later: a commit of it
// that says it was made under older rules, which had no such operation,
// is refused.
func since(rules int, k *kind) *kind {
	apply := k.apply
	k.apply = func(tx *cas.Tx, in json.RawMessage) (any, error) {
		if tx.Rules < rules {
			return nil, contracts.Invalidf("%s is an operation of rule set %d and later, not of rule set %d", k.name, rules, tx.Rules)
		}
		return apply(tx, in)
	}
	return k
}
