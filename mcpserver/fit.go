package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

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
			count(c.texts, "text"), c.textMax, its(c.texts), c.chars)
	}
	if c.lists > 0 {
		s += fmt.Sprintf(" %s over %d entries kept %s first and last (%d entries cut);",
			count(c.lists, "list"), c.listMax, its(c.lists), c.listLeft)
	}
	return s + " " + whole + ", run in your shell, prints it whole."
}

// count is "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// its is the possessive of n things.
func its(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
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
		cut := 0
		if len(items) > c.listMax {
			head := (c.listMax + 1) / 2
			cut = len(items) - c.listMax
			keep = append(items[:head:head], items[len(items)-(c.listMax-head):]...)
			c.lists++
			c.listLeft += cut
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

// text writes s as a JSON string, cut to about textMax characters: two
// thirds from its start and one third from its end (a test's output ends
// with what failed), with the cut marked in between. In a round after
// the first, a text the first round cut is cut again from both ends of
// what it kept, its mark counting all it lost.
func (c *cuts) text(b *bytes.Buffer, s string) error {
	head, tail, lost := s, "", 0
	if c.again {
		if h, t, n, ok := splitMark(s); ok {
			head, tail, lost = h, t, n
		}
	}
	hn, tn := utf8.RuneCountInString(head), utf8.RuneCountInString(tail)
	if hn+tn > c.textMax || lost > 0 {
		keepHead, keepTail := min(hn, c.textMax*2/3), min(hn+tn, c.textMax)-min(hn, c.textMax*2/3)
		if tail == "" {
			// One text: its end is the tail.
			head, tail = cutRunes(head, keepHead), lastRunes(head, keepTail)
		} else {
			head, tail = cutRunes(head, keepHead), lastRunes(tail, keepTail)
		}
		lost += hn + tn - keepHead - keepTail
		s = head + markOpen + strconv.Itoa(lost) + markClose + tail
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

// The mark of a cut text: " […N characters cut…] ".
const (
	markOpen  = " […"
	markClose = " characters cut…] "
)

// splitMark splits a text fit cut into what it kept before and after its
// mark, and how many characters it lost.
func splitMark(s string) (head, tail string, lost int, ok bool) {
	i := strings.Index(s, markOpen)
	if i < 0 {
		return "", "", 0, false
	}
	rest := s[i+len(markOpen):]
	j := strings.Index(rest, markClose)
	if j < 0 {
		return "", "", 0, false
	}
	n, err := strconv.Atoi(rest[:j])
	if err != nil || n < 0 {
		return "", "", 0, false
	}
	return s[:i], rest[j+len(markClose):], n, true
}

// cutRunes is the first n characters of s.
func cutRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// lastRunes is the last n characters of s.
func lastRunes(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
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
