package contracts

import "testing"

func TestPathMatches(t *testing.T) {
	cases := []struct {
		pattern, file string
		want          bool
	}{
		{"src/retry", "src/retry/a.go", true},
		{"src/retry/", "src/retry/a.go", true},
		{"src/retry", "src/retry", true},
		{"src/retry", "src/retryx/a.go", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/sub/a.go", false},
		{"src/*", "src/sub/a.go", true},
		{"docs/**", "docs/a/b/c.md", true},
		{"docs/**", "docsx/a.md", false},
		{"**", "anything/at/all", true},
		{"./README.md", "README.md", true},
	}
	for _, c := range cases {
		if got := PathMatches(c.pattern, c.file); got != c.want {
			t.Errorf("PathMatches(%q, %q) = %v, want %v", c.pattern, c.file, got, c.want)
		}
	}
}

func TestPathsOverlap(t *testing.T) {
	cases := []struct {
		a, b StringList
		want bool
	}{
		{StringList{"src/retry"}, StringList{"src/retry/a.go"}, true},
		{StringList{"src/retry"}, StringList{"src/retryx"}, false},
		{StringList{"src/retry/"}, StringList{"src/auth/"}, false},
		{StringList{"src/ret*"}, StringList{"src/retry/a.go"}, true},
		{StringList{"src/*.go"}, StringList{"docs/"}, false},
		{StringList{"src/*.go"}, StringList{"src/a/b"}, true},
		{StringList{"a", "b"}, StringList{"c", "b/x"}, true},
		{nil, StringList{"a"}, false},
		{StringList{"**"}, StringList{"a"}, true},
	}
	for _, c := range cases {
		if _, _, got := PathsOverlap(c.a, c.b); got != c.want {
			t.Errorf("PathsOverlap(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if _, _, got := PathsOverlap(c.b, c.a); got != c.want {
			t.Errorf("PathsOverlap(%v, %v) = %v, want %v (swapped)", c.b, c.a, got, c.want)
		}
	}
}

func TestValidPath(t *testing.T) {
	for _, ok := range []string{"src", "src/", "src/*.go", "docs/**", "./a", ".github/workflows", "src/.gitignore", "src/.liza", "docs/.worktrees", ".gitattributes"} {
		if err := ValidPath(ok); err != nil {
			t.Errorf("ValidPath(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/etc", "../x", "a/../../b", "a\tb", "a,b", "[x",
		".git", ".git/config", "./.git/hooks/", "src/.git/x", ".GIT/config", "sub/.Git", ".liza/ABORT", ".liza", ".LIZA/x", ".worktrees/t", "./.worktrees"} {
		if err := ValidPath(bad); err == nil {
			t.Errorf("ValidPath(%q) accepted", bad)
		}
	}
}

// TestValidatePaths: a state holding a reserved path is invalid under the
// rules that refuse it, and stays valid under the older ones (a history an
// older git-liza wrote keeps verifying).
func TestValidatePaths(t *testing.T) {
	task := &Task{ID: "t", Paths: StringList{"src", ".git/config"}}
	for rules, want := range map[int]int{RulesWhole: 0, RulesImport: 1} {
		var ps problems
		validatePaths(&ps, "tasks[t]", task, rules)
		if len(ps) != want {
			t.Errorf("rules %d: %d problems %v, want %d", rules, len(ps), ps, want)
		}
	}
}
