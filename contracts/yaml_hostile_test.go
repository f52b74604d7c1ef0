package contracts

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A state file with YAML aliases decodes into values that share their
// text, and is written out again in full: an anchored scalar of 100 KB
// named by 3,000 aliases is 120 KB stored and 300 MB once written, so the
// next write of the entity (an honest claim) is refused or runs out of
// memory. git-liza never writes an alias; a state file with one is
// refused when it is read, whatever reads it (an import, the guard, a
// clone).
func TestDecodeRefusesAliases(t *testing.T) {
	task := "id: a\ndescription: one\nstatus: UNCLAIMED\npriority: 3\ncreated: \"2026-01-01T00:00:00Z\"\nspec_ref: s.md\ndone_when: d\nscope: s\niteration: 0\n"
	for _, c := range []struct{ name, extra string }{
		{"scalar", "x_anchor: &b " + strings.Repeat("x", 100) + "\nx_bomb: [*b, *b, *b]\n"},
		{"field", "x_anchor: &b text\ndone_when_too: *b\n"},
		{"merge", "x_base: &m {x_note: hi}\nx_more:\n  <<: *m\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTask([]byte(task + c.extra))
			if err == nil {
				t.Fatalf("a task file with an alias was taken")
			}
			if !strings.Contains(err.Error(), "alias") {
				t.Fatalf("error %q does not name the alias", err)
			}
		})
	}
	// Anchors alone, and merge keys with a mapping written in place, name
	// nothing twice: taken.
	if _, err := ParseTask([]byte(task + "x_anchor: &b text\nx_more:\n  <<: {x_note: hi}\n")); err != nil {
		t.Fatalf("an anchor without alias: %v", err)
	}
	var st map[string]any
	if err := DecodeYAML([]byte("a: &x 1\nb: *x\n"), &st); err == nil {
		t.Fatalf("DecodeYAML took an alias")
	}
}

// log -p and diff compare the files of two states field by field. They
// read files of commits that do not verify too (a forged one fetched from
// a remote without the guard), so an alias there must not be followed:
// nine levels of ten aliases, under a KB, were a billion fields, and
// git liza log -p grew by 250 MB a second until it was killed. An alias is
// shown as written.
func TestDiffYAMLDoesNotFollowAliases(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	levels := 6 // a million fields followed, a second; nine never end
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	start := time.Now()
	changes, err := DiffYAML(nil, []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) > 10*levels {
		t.Fatalf("%d changes from a file of %d bytes (in %v): its aliases were followed", len(changes), b.Len(), time.Since(start))
	}
	var found bool
	for _, c := range changes {
		if c.Field == "l1" && strings.Contains(c.New, "*l0") {
			found = true
		}
	}
	if !found {
		t.Fatalf("the alias is not shown as written: %+v", changes)
	}
}

// The decoder checks a mapping's keys for duplicates pair by pair: a
// mapping of n keys costs n²/2 comparisons, so one state file of 1 MiB
// holding a single mapping of 100,000 short keys (an unknown field of a
// task, which an import may carry) kept the server's guard, and every
// clone that verifies it, busy for about a minute, and an import commit
// may carry 64 such files. No state file git-liza writes holds a mapping
// of more than a few dozen keys (the agents and handoffs have a file
// each): a mapping of more than MaxMappingKeys is refused before it is
// decoded.
func TestDecodeRefusesHugeMappings(t *testing.T) {
	var b strings.Builder
	b.WriteString("id: a\ndescription: one\nstatus: UNCLAIMED\npriority: 3\nx_big:\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "  k%x: 1\n", i)
	}
	start := time.Now()
	_, err := ParseTask([]byte(b.String()))
	if took := time.Since(start); err == nil || took > time.Second {
		t.Fatalf("a mapping of 20,000 keys: err %v, in %v", err, took)
	}
	if !strings.Contains(err.Error(), "line 6: a mapping of 20000 keys: a state file's mappings hold at most 1000") {
		t.Fatalf("error %q", err)
	}
	b.Reset()
	b.WriteString("x_big:\n")
	for i := 0; i < 1000; i++ { // MaxMappingKeys
		fmt.Fprintf(&b, "  k%x: 1\n", i)
	}
	var m map[string]any
	if err := DecodeYAML([]byte(b.String()), &m); err != nil {
		t.Fatalf("a mapping of 1000 keys: %v", err)
	}
}
