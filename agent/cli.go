package agent

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Presets are the agent CLIs a supervisor knows by name. Each runs one
// non-interactive session with the prompt appended as its last argument.
// Agents run unattended in their task's worktree, so the presets ask the
// CLIs not to stop for per-tool confirmation.
var Presets = map[string][]string{
	"claude": {"claude", "--dangerously-skip-permissions", "-p"},
	"codex":  {"codex", "exec", "--full-auto"},
	"gemini": {"gemini", "--yolo", "-p"},
}

// PresetNames lists the preset names in order.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Command resolves the agent command line: the words after `--` when
// given, else the named preset (default claude).
func Command(cli string, args []string) ([]string, error) {
	if len(args) > 0 {
		if cli != "" {
			return nil, fmt.Errorf("give either --cli or a command after --, not both")
		}
		return slices.Clone(args), nil
	}
	if cli == "" {
		cli = "claude"
	}
	p, ok := Presets[cli]
	if !ok {
		return nil, fmt.Errorf("unknown agent CLI %q (presets: %s; or give a command after --)", cli, strings.Join(PresetNames(), ", "))
	}
	return slices.Clone(p), nil
}
