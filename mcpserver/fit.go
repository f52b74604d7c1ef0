package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/liza-dev/git-liza/contracts"
)

// resultMax bounds the JSON text of any tool's result. An agent CLI keeps
// at most so much of a result (Claude Code: 50,000 characters in the
// conversation, and a refusal past 25,000 tokens), and the board holds
// text other agents wrote: a task file may be 1 MiB of description,
// feedback or checkpoint. A result over it is cut (see fit), whatever
// tool made it, so that no agent can fill another's context, or spend
// its tokens, through the board.
const resultMax = 40_000

// noteRoom is what a cut result keeps free for its note.
const noteRoom = 1024

// The cuts fit tries, in turn: texts of at most textMax characters and
// lists of at most listMax entries at the first, halved at each next.
const (
	textMax   = 4000
	listMax   = 100
	fitRounds = 6
)

// cuts counts what one round of fit cut.
type cuts struct {
	texts, chars     int // texts cut, and the characters they lost
	lists, listLeft  int // lists cut, and the entries they lost
	textMax, listMax int
	// again: the round cuts the first round's result, whose texts say
	// how much they lost already (see text).
	again bool
}

// fit returns out's JSON within resultMax: as it is when it fits; else
// with every text over a bound cut to its start and end, and every list
// over a bound cut to its first and last entries, the bounds halved
// until it fits. Object keys, numbers and booleans are kept, so the
// result still decodes into the tool's output type, ids and statuses
// whole. note says what was cut ("" when nothing was); a result that
// does not fit even at the last round is an error.
func fit(raw []byte, whole string) (out []byte, note string, err error) {
	if len(raw) <= resultMax {
		return raw, "", nil
	}
	// The rounds after the first cut its result, which is small: a
	// result of a hundred tasks of a megabyte each is read whole once.
	var first cuts
	from := raw
	for round := range fitRounds {
		c := cuts{textMax: textMax >> round, listMax: max(listMax>>round, 2), again: round > 0}
		var b bytes.Buffer
		if err := c.value(&b, from); err != nil {
			return nil, "", err
		}
		if round == 0 {
			first, from = c, b.Bytes()
		} else {
			// A list cut again lost what it lost in both rounds.
			c.listLeft += first.listLeft
		}
		// Room for the note, which the result carries too (cutNoter).
		if b.Len() <= resultMax-noteRoom {
			return b.Bytes(), c.note(len(raw), whole), nil
		}
	}
	return nil, "", contracts.Invalidf("the result is %d characters, more than a tool gives (%d) even cut: %s prints it", len(raw), resultMax, whole)
}

// note says what a round of fit cut, and which command prints it whole.
func (c *cuts) note(was int, whole string) string {
	s := fmt.Sprintf("This result was cut to fit %d characters (it was %d):", resultMax, was)
	if c.texts > 0 {
		s += fmt.Sprintf(" %s over %d characters kept %s start and end (%d characters cut, each cut marked […]);",
			contracts.Plural(c.texts, "text"), c.textMax, plural(c.texts, "its", "their"), c.chars)
	}
	if c.lists > 0 {
		s += fmt.Sprintf(" %s over %d entries kept %s first and last (%d entries cut);",
			contracts.Plural(c.lists, "list"), c.listMax, plural(c.lists, "its", "their"), c.listLeft)
	}
	return s + " " + whole + ", run in your shell, prints it whole."
}

// wholeOf is the command that prints whole what a tool gives cut.
func wholeOf(tool string) string {
	switch tool {
	case "show_task":
		return "git liza show ID --json"
	case "log_task":
		return "git liza log --task ID --json"
	case "status":
		return "git liza status --json"
	case "validate":
		return "git liza validate --json"
	}
	return "the git liza command of the same name"
}

// value writes the JSON value raw, cut.
func (c *cuts) value(b *bytes.Buffer, raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return fmt.Errorf("empty JSON value")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		return c.text(b, s)
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		keep := items
		if len(items) > c.listMax {
			head := (c.listMax + 1) / 2
			keep = append(items[:head:head], items[len(items)-(c.listMax-head):]...)
			c.lists++
			c.listLeft += len(items) - c.listMax
		}
		b.WriteByte('[')
		for i, it := range keep {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := c.value(b, it); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case '{':
		// Keys in the order given: a decoder's tokens keep it, where a
		// map would sort them.
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil {
			return err
		}
		b.WriteByte('{')
		for first := true; dec.More(); first = false {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			if !first {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(k)
			b.Write(key)
			b.WriteByte(':')
			if err := c.value(b, v); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	}
	b.Write(raw)
	return nil
}

// text writes s as a JSON string, cut to textMax characters (see
// contracts.CutText). In a round after the first, a text the first round
// cut is cut again from both ends of what it kept, its mark counting all
// it lost (contracts.CutAgain).
func (c *cuts) text(b *bytes.Buffer, s string) error {
	cut := contracts.CutText
	if c.again {
		cut = contracts.CutAgain
	}
	s, lost := cut(s, c.textMax)
	if lost > 0 {
		c.texts++
		c.chars += lost
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// cutNoter is a tool's output that says in itself what was cut: the
// agent CLIs give the model a result's structured content rather than its
// text when it has both (Claude Code, codex), so a note only beside it
// would not reach the model.
type cutNoter interface{ noteCut(note string) }

// withCut is the open JSON object doc with the note first, under "cut".
func withCut(doc json.RawMessage, note string) json.RawMessage {
	doc = bytes.TrimSpace(doc)
	if len(doc) < 2 || doc[0] != '{' {
		return doc
	}
	key, _ := json.Marshal(note)
	out := append([]byte(`{"cut":`), key...)
	if rest := bytes.TrimSpace(doc[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, doc[1:]...)
}
