package refstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wantConfig checks Config(key) against the expected value and against
// what `git config --get` says in the same place with the same environment.
func wantConfig(t *testing.T, r *Repo, key, want string) {
	t.Helper()
	got, ok := r.Config(key)
	if want == "" {
		if ok {
			t.Errorf("Config(%q) = %q, want unset", key, got)
		}
		if out, err := runGit(r.Dir(), nil, nil, "config", "--get", key); err == nil {
			t.Errorf("git config --get %s = %q, but the test expects it unset", key, out)
		}
		return
	}
	if !ok || got != want {
		t.Errorf("Config(%q) = %q, %v; want %q", key, got, ok, want)
	}
	if out := git(t, r.Dir(), "config", "--get", key); out != want {
		t.Errorf("git config --get %s = %q, but the test expects %q", key, out, want)
	}
}

func TestConfigFiles(t *testing.T) {
	dir := newRepo(t)
	writeFile(t, os.Getenv("GIT_CONFIG_GLOBAL"), "[user]\n\tname = Global Name\n\temail = global@example.com\n[liza]\n\tintegrationBranch = from-global\n")
	git(t, dir, "config", "user.name", "Repo Name")
	git(t, dir, "config", "remote.origin.url", "https://example.com/repo.git")
	git(t, dir, "config", "url.https://example.com/a.b.insteadOf", "ex:")
	git(t, dir, "config", "--add", "liza.multi", "first")
	git(t, dir, "config", "--add", "liza.multi", "second")

	r := open(t, dir)
	wantConfig(t, r, "user.name", "Repo Name")                // repository beats global
	wantConfig(t, r, "user.email", "global@example.com")      // global only
	wantConfig(t, r, "liza.integrationBranch", "from-global") // camelCase key
	wantConfig(t, r, "liza.integrationbranch", "from-global") // keys are case-insensitive
	wantConfig(t, r, "remote.origin.url", "https://example.com/repo.git")
	wantConfig(t, r, "url.https://example.com/a.b.insteadOf", "ex:") // dots in the subsection
	wantConfig(t, r, "liza.multi", "second")                         // last one wins
	wantConfig(t, r, "remote.Origin.url", "")                        // subsections are case-sensitive
	wantConfig(t, r, "remote.upstream.url", "")
	wantConfig(t, r, "liza.nothing", "")
}

func TestConfigWorktreeFile(t *testing.T) {
	dir := newRepo(t)
	git(t, dir, "config", "user.name", "Repo Name")
	git(t, dir, "config", "core.repositoryformatversion", "1")
	git(t, dir, "config", "extensions.worktreeConfig", "true")
	git(t, dir, "config", "--worktree", "user.name", "Worktree Name")
	r := open(t, dir)
	wantConfig(t, r, "user.name", "Worktree Name")
}

func TestConfigParameters(t *testing.T) {
	dir := newRepo(t)
	writeFile(t, os.Getenv("GIT_CONFIG_GLOBAL"), "[user]\n\tname = Global Name\n")
	git(t, dir, "config", "user.email", "repo@example.com")

	for _, c := range []struct {
		params, key, want string
	}{
		// What git itself exports for `git -c user.name='X Y' ...`.
		{`'user.name'='X Y'`, "user.name", "X Y"},
		// The older single-word form.
		{`'user.name=X Y'`, "user.name", "X Y"},
		{`'liza.flag=a=b'`, "liza.flag", "a=b"},
		// -c beats every file.
		{`'user.email'='cli@example.com'`, "user.email", "cli@example.com"},
		// Last one wins.
		{`'user.name'='First' 'user.name'='Second'`, "user.name", "Second"},
		{`'user.name=First' 'user.name'='Second'`, "user.name", "Second"},
		// Several keys, subsections, escaped quotes, case.
		{`'user.email'='e@x' 'remote.origin.url'='https://x/y.git'`, "remote.origin.url", "https://x/y.git"},
		{`'user.name'='it'\''s me'`, "user.name", "it's me"},
		{`'User.Name'='Upper'`, "user.name", "Upper"},
		// Keys not named fall through to the files.
		{`'liza.other'='x'`, "user.name", "Global Name"},
	} {
		t.Run(c.params, func(t *testing.T) {
			t.Setenv("GIT_CONFIG_PARAMETERS", c.params)
			r := open(t, dir) // Config caches the files per Repo
			wantConfig(t, r, c.key, c.want)
		})
	}
}

// TestConfigParametersFromGit checks the parser against the variable git
// really exports to a subcommand, through an alias.
func TestConfigParametersFromGit(t *testing.T) {
	dir := newRepo(t)
	git(t, dir, "config", "alias.params", `!printf %s "$GIT_CONFIG_PARAMETERS"`)
	params := git(t, dir, "-c", "user.name=X Y", "-c", "remote.origin.url=u'q", "params")
	t.Setenv("GIT_CONFIG_PARAMETERS", params)
	r := open(t, dir)
	wantConfig(t, r, "user.name", "X Y")
	wantConfig(t, r, "remote.origin.url", "u'q")
}

// TestConfigParametersValuelessKey: `git -c core.quotepath liza ...` (a -c
// with no "=", a boolean true) makes git export `'core.quotepath'=` with no
// value. The -c values after it must still be seen.
func TestConfigParametersValuelessKey(t *testing.T) {
	dir := newRepo(t)
	git(t, dir, "config", "alias.params", `!printf %s "$GIT_CONFIG_PARAMETERS"`)
	params := git(t, dir, "-c", "liza.flag", "-c", "user.name=After Flag", "params")
	if !strings.HasPrefix(params, "'liza.flag'= ") {
		t.Logf("git exported %q", params)
	}
	t.Setenv("GIT_CONFIG_PARAMETERS", params)
	r := open(t, dir)
	wantConfig(t, r, "user.name", "After Flag")
}

// The parser reads the syntax git accepts the way git reads it.
func TestConfigSyntaxLikeGit(t *testing.T) {
	dir := newRepo(t)
	inc := filepath.Join(t.TempDir(), "included")
	writeFile(t, inc, "[liza]\n\tfromInclude = yes\n")
	writeFile(t, filepath.Join(dir, ".git", "config"), `[core]
	repositoryformatversion = 0
	bare = false
; a comment
# another
[liza] remote = origin ; trailing comment
	spaced =   several   words   here  
	quoted = x"  kept  ;#  "y
	escaped = tab\there \"q\" back\\slash
	continued = first \
second
	flag
	empty =
	Mixed-Case = value
[Liza "Sub.Section"]
	key = sub value
[liza.old]
	key = old style
[include]
	path = `+inc+`
`)
	r := open(t, dir)
	for key, want := range map[string]string{
		"liza.remote":                  "origin",
		"liza.spaced":                  "several   words   here",
		"liza.quoted":                  "x  kept  ;#  y",
		"liza.escaped":                 "tab\there \"q\" back\\slash",
		"liza.continued":               "first second",
		"liza.mixed-case":              "value",
		"LIZA.MIXED-CASE":              "value",
		"liza.Sub.Section.key":         "sub value",
		"liza.old.key":                 "old style",
		"liza.fromInclude":             "yes",
		"liza.sub.section.key":         "",
		"liza.nosuchkey":               "",
		"core.repositoryformatversion": "0",
	} {
		wantConfig(t, r, key, want)
	}
	// A bare name is true; an empty value is empty (git --get prints "").
	if v, ok := r.Config("liza.flag"); !ok || v != "true" {
		t.Errorf("liza.flag = %q, %v", v, ok)
	}
	if v, ok := r.Config("liza.empty"); !ok || v != "" {
		t.Errorf("liza.empty = %q, %v", v, ok)
	}
}

func TestConfigSyntaxErrors(t *testing.T) {
	for _, text := range []string{
		"key = outside\n",
		"[sec\n",
		"[sec \"unterminated]\n",
		"[sec]\n\tk = \"open\n",
		"[sec]\n\tk = bad \\q escape\n",
		"[sec]\n\t= novalue\n",
	} {
		if _, err := parseConfig(text); err == nil {
			t.Errorf("parseConfig(%q) accepted", text)
		}
	}
}
