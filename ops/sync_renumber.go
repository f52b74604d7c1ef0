package ops

import (
	"encoding/json"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// renumbered maps the numbers local operations gave the discoveries and
// notes they appended to the numbers those have on the remote's board (0:
// not applied again there).
type renumbered struct {
	disc, notes map[int]int
	// lost are the tasks local operations added that were not applied
	// again on the remote's board.
	lost map[string]bool
}

// lostTask is the first task a recorded operation names (its Liza-Task
// trailer, and the task ids in its input) that was added here and not
// applied again, or "".
func (r *renumbered) lostTask(msg string, raw json.RawMessage) string {
	if len(r.lost) == 0 {
		return ""
	}
	ids := strings.Fields(cas.Trailers(msg)["Liza-Task"])
	var in map[string]json.RawMessage
	if json.Unmarshal(raw, &in) == nil {
		var one string
		if json.Unmarshal(in["task"], &one) == nil {
			ids = append(ids, one)
		}
		for _, key := range []string{"depends_on", "by"} {
			var many []string
			if json.Unmarshal(in[key], &many) == nil {
				ids = append(ids, many...)
			}
		}
	}
	for _, id := range ids {
		if r.lost[id] {
			return id
		}
	}
	return ""
}

func (r *renumbered) of(list string) map[int]int {
	if list == cas.ListDiscovered {
		return r.disc
	}
	return r.notes
}

// input is a recorded input with the discovery and note numbers it names
// as they are on the remote's board.
func (r *renumbered) input(kind string, raw json.RawMessage) (json.RawMessage, error) {
	changed := false
	at := func(m map[int]int, n int, what string) (int, error) {
		to, ok := m[n]
		switch {
		case !ok:
			return n, nil
		case to == 0:
			return 0, contracts.Invalidf("%s %d was made here and was not applied again", what, n)
		}
		changed = changed || to != n
		return to, nil
	}
	// The input is written again only where a number changed: else it
	// goes as it was recorded.
	again := func(in any) (json.RawMessage, error) {
		if !changed {
			return raw, nil
		}
		return json.Marshal(in)
	}
	var err error
	switch kind {
	case kindAdd.name:
		var in addInput
		if json.Unmarshal(raw, &in) != nil || in.FromDiscovery == 0 {
			return raw, nil
		}
		if in.FromDiscovery, err = at(r.disc, in.FromDiscovery, "discovery"); err != nil {
			return nil, err
		}
		return again(in)
	case kindConvert.name:
		var in convertInput
		if json.Unmarshal(raw, &in) != nil {
			return raw, nil
		}
		if in.Discovery, err = at(r.disc, in.Discovery, "discovery"); err != nil {
			return nil, err
		}
		return again(in)
	case kindNotesDone.name:
		var in notesDoneInput
		if json.Unmarshal(raw, &in) != nil {
			return raw, nil
		}
		for i, n := range in.Notes {
			if in.Notes[i], err = at(r.notes, n, "note"); err != nil {
				return nil, err
			}
		}
		return again(in)
	}
	return raw, nil
}
