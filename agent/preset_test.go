package agent

import (
	"os"
	"strings"
	"testing"
)

// TestPresetFlagsInDocs: docs/agent-clis.md says exactly which flags each
// preset passes, in both situations.
func TestPresetFlagsInDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/agent-clis.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, name := range PresetNames() {
		for _, sandboxed := range []bool{true, false} {
			flags := Presets[name].Flags(sandboxed)
			if !strings.Contains(readme, "    "+flags+"\n") {
				t.Errorf("docs/agent-clis.md lacks the %s preset's command line (sandboxed %v):\n    %s", name, sandboxed, flags)
			}
		}
	}
}

// TestPresetArgs: the git directories become writable for the CLI's own
// sandbox; --sandboxed turns that sandbox off; the prompt is last.
func TestPresetArgs(t *testing.T) {
	s := Session{Dir: "/p/.worktrees/a", Writable: []string{"/p/.git", "/p/.git/worktrees/a"}}
	for _, tc := range []struct {
		cli       string
		sandboxed bool
		want      string
	}{
		{"claude", true, "/bin/claude --output-format stream-json --verbose --dangerously-skip-permissions -p PROMPT"},
		{"codex", true, "/bin/codex exec --json -c allow_login_shell=false --dangerously-bypass-approvals-and-sandbox PROMPT"},
		{"codex", false, "/bin/codex exec --json -c allow_login_shell=false --sandbox workspace-write --add-dir /p/.git --add-dir /p/.git/worktrees/a PROMPT"},
		{"gemini", true, "/bin/gemini --output-format stream-json --approval-mode yolo --skip-trust -p PROMPT"},
		{"gemini", false, "/bin/gemini --output-format stream-json --approval-mode yolo --skip-trust --sandbox -p PROMPT"},
	} {
		l, err := Resolve(tc.cli, nil, tc.sandboxed)
		if err != nil {
			t.Fatal(err)
		}
		l.Command[0] = "/bin/" + tc.cli
		argv, _, err := l.Argv(s, "PROMPT")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(argv, " "); got != tc.want {
			t.Errorf("%s sandboxed=%v:\n got %s\nwant %s", tc.cli, tc.sandboxed, got, tc.want)
		}
	}
	l, _ := Resolve("claude", nil, false)
	argv, _, _ := l.Argv(s, "PROMPT")
	if got := strings.Join(argv, " "); !strings.Contains(got, `"allowWrite":["/p/.git","/p/.git/worktrees/a"]`) || !strings.Contains(got, "--add-dir /p/.git --add-dir /p/.git/worktrees/a -p PROMPT") {
		t.Errorf("claude with its sandbox: %s", got)
	}
	if got := strings.Join(argv[1:], " "); !strings.HasPrefix(got, "--output-format stream-json --verbose ") {
		t.Errorf("claude with its sandbox does not stream JSON: %s", got)
	}
	if _, err := Resolve("claude", []string{"sh"}, false); err == nil {
		t.Error("--cli and a command both given: no error")
	}
}

// TestLaunchFormat: each preset's session output is read in its CLI's
// stream format; a command given after -- is plain text.
func TestLaunchFormat(t *testing.T) {
	for name, want := range map[string]string{"claude": "claude", "codex": "codex", "gemini": "gemini"} {
		l, err := Resolve(name, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Format(); got != want {
			t.Errorf("%s preset: format %q, want %q", name, got, want)
		}
	}
	l, err := Resolve("", []string{"/bin/sh", "-c", "echo hi"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Format(); got != "text" {
		t.Errorf("a command after --: format %q, want text", got)
	}
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{
		{"2.1.327", "2.1.328", true}, {"2.1.328", "2.1.328", false}, {"2.2.0", "2.1.328", false},
		{"0.61.0", "0.169.0", true}, {"1.0.0", "0.169.0", false},
	} {
		if got := VersionLess(tc.a, tc.b); got != tc.less {
			t.Errorf("VersionLess(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}
