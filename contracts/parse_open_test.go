package contracts

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// openSeed is a seed-format state with agents agents and handoffs
// handoffs, each with a field the schema does not know (kept in Extra),
// one of them an untagged timestamp.
func openSeed(agents, handoffs int) string {
	var b strings.Builder
	b.WriteString("version: 1\ngoal: {id: goal-1, description: g, status: IN_PROGRESS, created: \"2026-01-17T09:00:00Z\"}\n")
	b.WriteString("config: {integration_branch: integration}\nsprint: {id: sprint-1, goal_ref: goal-1, status: IN_PROGRESS}\ntasks: []\nagents:\n")
	for i := 1; i <= agents; i++ {
		fmt.Fprintf(&b, "  coder-%d: {role: coder, status: IDLE, generation: %d, seen_at: 2026-01-17T09:00:00Z}\n", i, i%7)
	}
	if handoffs > 0 {
		b.WriteString("handoff:\n")
		for i := 1; i <= handoffs; i++ {
			fmt.Fprintf(&b, "  h%d: {agent: coder-%d, time: \"2026-01-17T09:00:00Z\", summary: 's %d', next_action: n, note: x}\n", i, i, i)
		}
	}
	return b.String()
}

// The agents and the handoff mappings, past MaxMappingKeys, decode as the
// whole document's decoding made them.
func TestParseStateOpenMappingsAsBefore(t *testing.T) {
	for _, n := range [][2]int{{3, 2}, {MaxMappingKeys + 500, MaxMappingKeys + 1}, {0, 0}} {
		data := openSeed(n[0], n[1])
		got, err := ParseState([]byte(data))
		if err != nil {
			t.Fatalf("%d agents, %d handoffs: %v", n[0], n[1], err)
		}
		var want State
		if err := decode("", []byte(data), &want, 0); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("%d agents, %d handoffs: ParseState differs from the document decoded whole", n[0], n[1])
		}
		if len(got.Agents) != n[0] || n[0] > 0 && got.Agents["coder-1"].Extra["seen_at"] != "2026-01-17T09:00:00Z" {
			t.Errorf("%d agents: decoded %d, coder-1 %+v", n[0], len(got.Agents), got.Agents["coder-1"])
		}
	}
}

// What the open mappings may not hold is refused with one line naming
// it, and every other mapping keeps its cap.
func TestParseStateOpenMappingsRefused(t *testing.T) {
	big := openSeed(MaxMappingKeys+10, 0)
	for name, c := range map[string]struct{ data, want string }{
		"duplicate agent": {big + "  coder-7: {role: coder, status: IDLE}\n",
			fmt.Sprintf(`^line %d: mapping key "coder-7" already defined at line 13$`, 7+MaxMappingKeys+10)},
		"duplicate handoff": {openSeed(1, 3) + "  h2: {agent: coder-1}\n",
			`^line 12: mapping key "h2" already defined at line 10$`},
		"alias in an agent": {strings.Replace(big, "coder-3: {", "coder-3: &a {", 1) + "  coder-x: *a\n",
			`^line \d+: an alias \(\*a\): a state file names each value where it stands, with no YAML aliases$`},
		"key not a name": {big + "  [x]: {role: coder}\n",
			`^line \d+: a key of agents is not a name$`},
		"merge key": {big + "  <<: {coder-x: {role: coder, status: IDLE}}\n",
			`^line \d+: a key of agents is not a name$`},
		"big mapping elsewhere": {strings.Replace(big, "tasks: []", "tasks: []\nextra_map:\n"+manyKeys(MaxMappingKeys+1), 1),
			fmt.Sprintf(`^line 7: a mapping of %d keys: a state file's mappings hold at most %d$`, MaxMappingKeys+1, MaxMappingKeys)},
	} {
		_, err := ParseState([]byte(c.data))
		if err == nil || !matches(c.want, err.Error()) {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  k%d: v\n", i)
	}
	return b.String()
}

// BenchmarkParseStateAgents decodes a seed-format file whose agents
// mapping holds 10,000 and 100,000 keys: time that grows with the keys,
// not with their square.
func BenchmarkParseStateAgents(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		data := []byte(openSeed(n, 0))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := ParseState(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// matches reports whether s matches the regular expression re.
func matches(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
