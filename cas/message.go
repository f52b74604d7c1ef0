package cas

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// commitMessage is the subject, a blank line and the trailers.
func commitMessage(op Op, tx *Tx) string {
	subject := tx.subject
	if subject == "" {
		subject = string(op.Name)
	}
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\n")
	if body := strings.TrimSpace(tx.body); body != "" {
		b.WriteString(body)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "Liza-Op: %s\n", op.Name)
	fmt.Fprintf(&b, "Liza-Agent: %s\n", contracts.ActorName(op.Agent))
	if tx.task != "" {
		fmt.Fprintf(&b, "Liza-Task: %s\n", tx.task)
	}
	if op.Generation != 0 {
		fmt.Fprintf(&b, "Liza-Generation: %d\n", op.Generation)
	}
	if op.Request != "" {
		fmt.Fprintf(&b, "Liza-Request: %s\n", op.Request)
	}
	if op.Kind != "" {
		fmt.Fprintf(&b, "Liza-Kind: %s\n", op.Kind)
		if r := op.RulesOf(); r > contracts.RulesFirst {
			fmt.Fprintf(&b, "Liza-Rules: %d\n", r)
		}
	}
	if len(op.Input) > 0 {
		fmt.Fprintf(&b, "Liza-Input: %s\n", op.Input)
	}
	return b.String()
}

// Trailers reads the "Key: value" lines of a commit message's last
// paragraph.
func Trailers(msg string) map[string]string {
	out := map[string]string{}
	paras := strings.Split(strings.TrimSpace(msg), "\n\n")
	if len(paras) < 2 {
		return out
	}
	for _, line := range strings.Split(paras[len(paras)-1], "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok && !strings.ContainsAny(k, " \t") {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// inputDigest identifies what a request asked for: its kind and input, or
// the input's "asked" part when it has one (an operation that chooses, a
// claim of the best task, records what it chose beside what it was asked).
func inputDigest(op Op) string {
	asked := op.Input
	var parts struct {
		Asked json.RawMessage `json:"asked"`
	}
	if json.Unmarshal(op.Input, &parts) == nil && len(parts.Asked) > 0 {
		asked = parts.Asked
	}
	sum := sha256.Sum256(append([]byte(op.Kind+"\x00"), asked...))
	return hex.EncodeToString(sum[:16])
}

// Requested reports what a request id already did at the tip: its result,
// when the id was used by the same operation, agent and inputs (as op
// says); an error when it was used for something else; nothing when it is
// new. Operations that choose what they do before they write (a claim) ask
// first, so that a retried request reports its first result.
func (tx *Tx) Requested(op Op) (json.RawMessage, bool, error) {
	if op.Request == "" {
		return nil, false, nil
	}
	data, ok, err := tx.Snap.ReadFile(requestPath(op.Request))
	if err != nil || !ok {
		return nil, false, err
	}
	var rec requestRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, false, inconsistent("request record %s: %v", op.Request, err)
	}
	if rec.Op != string(op.Name) || rec.Agent != op.Agent {
		return nil, false, contracts.Invalidf("request id %s was already used by %s (%s)", op.Request, rec.Op, contracts.ActorName(rec.Agent))
	}
	if rec.Digest != "" && rec.Digest != inputDigest(op) {
		return nil, false, contracts.Invalidf("request id %s was already used for %s with other inputs: nothing done (use a new request id for a new request)", op.Request, rec.Op)
	}
	return rec.Result, true, nil
}

// requestPath spreads request records over 256 subtrees so that no tree an
// operation rewrites grows without bound.
func requestPath(id string) string {
	sum := sha1.Sum([]byte(id))
	h := hex.EncodeToString(sum[:])
	return RequestDir + "/" + h[:2] + "/" + h[2:]
}

// ValidRequestID checks an idempotency key: 1-128 characters of
// [A-Za-z0-9._:-].
func ValidRequestID(id string) error {
	if len(id) == 0 || len(id) > 128 {
		return contracts.Invalidf("invalid request id %q: 1 to 128 characters", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c)) {
			return contracts.Invalidf("invalid request id %q: use letters, digits and . _ : -", id)
		}
	}
	return nil
}

// CheckImportRequests holds the request records of the state an import
// made (snap) to what an import writes: the whole state anew, which keeps
// no record of its parent's, and its own when op has a request id. A
// record is what a later request with its id is answered from without
// doing anything, so one an import planted (a claim "done" that took
// nothing, for an id the agent has not used yet) is refused.
func CheckImportRequests(snap *Snapshot, op Op) error {
	var want string
	if op.Request != "" {
		want = snap.locate(requestPath(op.Request))
	}
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		list, err := snap.Entries(dir)
		if err != nil {
			return err
		}
		for _, e := range list {
			p := dir + "/" + e.Name
			if e.IsTree() && depth < 3 {
				if err := walk(p, depth+1); err != nil {
					return err
				}
				continue
			}
			if p != want {
				return fmt.Errorf("it holds request record %s, which an import does not write (an import keeps no request record but its own)", p)
			}
		}
		return nil
	}
	if err := walk(RequestDir, 1); err != nil {
		return err
	}
	if want == "" {
		return nil
	}
	got, ok, err := snap.ReadFile(requestPath(op.Request))
	if err != nil {
		return err
	}
	rec, _ := json.Marshal(requestRecord{Op: string(op.Name), Agent: op.Agent, Digest: inputDigest(op), Result: json.RawMessage("null")})
	if !ok || !bytes.Equal(got, rec) {
		return fmt.Errorf("its record of request %s is not the one an import writes", op.Request)
	}
	return nil
}
