package refstore

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestProgramKeys: the classes of settings that name a program, with and
// without subsections, and settings that do not.
func TestProgramKeys(t *testing.T) {
	for key, want := range map[string]bool{
		"core.fsmonitor":              true,
		"core.hookspath":              true,
		"filter.lfs.smudge":           true,
		"filter.lfs.process":          true,
		"diff.evil.textconv":          true,
		"merge.union.driver":          true,
		"credential.helper":           true,
		"credential.https://x.helper": true,
		"remote.origin.uploadpack":    true,
		"remote.origin.url":           false,
		"gpg.ssh.program":             true,
		"gpg.format":                  false,
		"user.signingkey":             false,
		"pager.log":                   true,
		"sendemail.tocmd":             true,
		"trailer.sign.cmd":            true,
		"protocol.ext.allow":          true,
		"core.bare":                   false,
		"liza.remote":                 false,
		"filter.smudge":               false, // no driver name: not a driver's setting
	} {
		if got := programKey(key); got != want {
			t.Errorf("programKey(%s) = %v, want %v", key, got, want)
		}
	}
}

// envConfig reads back what an environment tells git on the command line
// (GIT_CONFIG_COUNT pairs), as git would: the last value of each key.
func envConfig(env []string) map[string][]string {
	out := map[string][]string{}
	count := envValue(env, "GIT_CONFIG_COUNT")
	for i := 0; ; i++ {
		k := envValue(env, "GIT_CONFIG_KEY_"+itoa(i))
		if k == "" || itoa(i) == count {
			break
		}
		out[k] = append(out[k], envValue(env, "GIT_CONFIG_VALUE_"+itoa(i)))
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestContainEnv: a program the repository's config names is replaced by
// the user's own setting or by one that runs nothing; a list the
// repository extends is the user's alone; what the command line sets is
// left to it; hooks, replace refs and grafts are off whatever the config.
func TestContainEnv(t *testing.T) {
	dir := newRepo(t)
	global := filepath.Join(t.TempDir(), "gitconfig")
	writeFile(t, global, "[filter \"lfs\"]\n\tsmudge = git-lfs smudge -- %f\n[credential]\n\thelper = store\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	inc := filepath.Join(t.TempDir(), "more.config")
	writeFile(t, inc, "[core]\n\tpager = evil-pager\n")
	for _, kv := range [][2]string{
		{"core.fsmonitor", "evil-fsmonitor"},
		{"filter.lfs.smudge", "evil-smudge"},
		{"filter.evil.clean", "evil-clean"},
		{"credential.helper", "evil-helper"},
		{"remote.origin.receivepack", "evil-receive-pack"},
		{"diff.external", "evil-diff"},
		{"includeIf.onbranch:main.path", inc},
		{"gpg.ssh.program", "evil-keygen"},
	} {
		git(t, dir, "config", kv[0], kv[1])
	}
	r := open(t, dir)
	env := ContainEnv([]string{"GIT_CONFIG_PARAMETERS='diff.external'='my-diff'"})
	got := envConfig(env)
	for key, want := range map[string][]string{
		"core.fsmonitor":    {"false"},
		"filter.lfs.smudge": {"git-lfs smudge -- %f"},
		"filter.evil.clean": {"cat"},
		"credential.helper": {"", "store"},
		"core.pager":        {"cat"},
		"core.hookspath":    {os.DevNull},
		"core.commitgraph":  {"false"},
		"gpg.ssh.program":   {"ssh-keygen"},
	} {
		if strings.Join(got[key], "|") != strings.Join(want, "|") {
			t.Errorf("%s = %q, want %q", key, got[key], want)
		}
	}
	if _, ok := got["diff.external"]; ok {
		t.Errorf("diff.external was set on the command line, and overridden: %q", got["diff.external"])
	}
	for _, v := range []string{"GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=" + noGrafts} {
		if !strings.Contains(strings.Join(env, "\n"), v) {
			t.Errorf("the environment lacks %s", v)
		}
	}
	// The repository's own reader of its config agrees: a program setting
	// comes from the user's files only.
	if v, _ := r.Config("gpg.ssh.program"); v != "" {
		t.Errorf("Config(gpg.ssh.program) = %q, want the repository's value ignored", v)
	}
	if v, _ := r.ConfigAnyScope("gpg.ssh.program"); v != "evil-keygen" {
		t.Errorf("ConfigAnyScope(gpg.ssh.program) = %q", v)
	}
	// A push names the receive-pack the user set, or git's own: the first
	// remote.NAME.receivepack git reads would be the repository's.
	if got := r.PackProgram("origin", true); got != "--receive-pack=git-receive-pack" {
		t.Errorf("PackProgram = %q", got)
	}
	// A config planted after this process opened the repository counts at
	// the next git process.
	git(t, dir, "config", "core.alternateRefsCommand", "evil-refs")
	if got := envConfig(ContainEnv(nil))["core.alternaterefscommand"]; len(got) != 1 || got[0] != "" {
		t.Errorf("a setting planted later: core.alternaterefscommand = %q", got)
	}
	// And git, run with it, runs none of them.
	out, err := runUncontained(context.Background(), dir, "config", "core.fsmonitor")
	if err != nil || strings.TrimSpace(string(out)) != "evil-fsmonitor" {
		t.Fatalf("the planted value: %q %v", out, err)
	}
	out, err = Run(context.Background(), dir, nil, "config", "core.fsmonitor")
	if err != nil || strings.TrimSpace(string(out)) != "false" {
		t.Errorf("git run by git-liza sees core.fsmonitor = %q (%v), want false", out, err)
	}
}

// BenchmarkContainEnv is what every git process git-liza starts pays for
// containment: the user's config files read, the repository's stat'd (and
// scanned when they changed).
func BenchmarkContainEnv(b *testing.B) {
	dir := b.TempDir()
	if out, err := runGit(dir, nil, nil, "init", "-q"); err != nil {
		b.Fatal(out, err)
	}
	if _, err := Open(dir); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = ContainEnv(nil)
	}
}

// TestContainEnvIncludes: a setting in a file the repository's config
// includes counts, and so does a change to that file later.
func TestContainEnvIncludes(t *testing.T) {
	dir := newRepo(t)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	inc := filepath.Join(t.TempDir(), "inc", "more.config")
	writeFile(t, inc, "[user]\n\tname = x\n")
	git(t, dir, "config", "include.path", inc)
	open(t, dir)
	if got := envConfig(ContainEnv(nil))["core.pager"]; got != nil {
		t.Fatalf("core.pager = %q before it is set", got)
	}
	writeFile(t, inc, "[core]\n\tpager = evil-pager\n")
	if got := envConfig(ContainEnv(nil))["core.pager"]; len(got) != 1 || got[0] != "cat" {
		t.Errorf("core.pager planted in an included file later = %q, want cat", got)
	}
}

// TestContainEnvUnparsed: a config file this reader cannot parse, but git
// can, is read through git, not taken for empty.
func TestContainEnvUnparsed(t *testing.T) {
	dir := newRepo(t)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	open(t, dir)
	cfg := filepath.Join(dir, ".git", "config")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// git skips a byte order mark at the start of a config file.
	planted := "\ufeff" + string(b) + "[filter \"evil\"]\n\tsmudge = evil-smudge\n"
	if err := os.WriteFile(cfg, []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, perr := parseConfigFileIf(cfg, 0, true, nil, nil); perr == nil {
		t.Skip("this reader parses the file: nothing to fall back from")
	}
	if got := envConfig(ContainEnv(nil))["filter.evil.smudge"]; len(got) != 1 || got[0] != "cat" {
		t.Errorf("filter.evil.smudge from a file only git parses = %q, want cat", got)
	}
}
