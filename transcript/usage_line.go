package transcript

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// UsageKey is the key of the JSON line with which an agent run as a
// command (-- COMMAND, read in the text format) reports what its session
// spent, on its output:
//
//	{"liza_usage":{"model":"m","input_tokens":1200,"output_tokens":300,"cache_read_tokens":0,"cache_write_tokens":0,"cost_usd":0.01}}
//
// Each such line gives the session's usage so far: the last one counts.
// A cost_usd above zero is taken as reported; without one the board
// prices the tokens at the model's price. Input tokens are those not read
// from a cache. A line whose report is not valid (not an object, a count
// negative or past the bounds) stays a line of output.
const UsageKey = "liza_usage"

// usageLine reads a text-format JSON line as a usage report, if it is one.
func usageLine(t time.Time, raw json.RawMessage) (Step, bool) {
	if !bytes.Contains(raw, []byte(`"`+UsageKey+`"`)) {
		return Step{}, false
	}
	var line map[string]json.RawMessage
	if json.Unmarshal(raw, &line) != nil || line[UsageKey] == nil {
		return Step{}, false
	}
	var u Usage
	if json.Unmarshal(line[UsageKey], &u) != nil {
		return Step{}, false
	}
	u.CostSource = ""
	if u.CostUSD > 0 {
		u.CostSource = contracts.CostReported
	}
	if contracts.ValidSessionUsage(u) != nil {
		return Step{}, false
	}
	return Step{T: t, Kind: KindUsage, Model: u.Model, Usage: &u}, true
}
