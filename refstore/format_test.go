package refstore

import (
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/contracts"
)

// Open reads a repository itself only in a format it knows, and otherwise
// goes through git: where git works, Open works and sees the object format
// git sees; where git refuses the repository, Open fails with exit code 3
// and git's own complaint.
func TestOpenFollowsGitOnFormats(t *testing.T) {
	for _, c := range []struct {
		name    string
		init    []string // extra git init arguments
		config  [][2]string
		through bool // read through git's plumbing
	}{
		{name: "plain"},
		{name: "sha256", init: []string{"--object-format=sha256"}},
		{name: "sha1 spelled out", config: [][2]string{{"core.repositoryFormatVersion", "1"}, {"extensions.objectFormat", "sha1"}}},
		{name: "files refs", config: [][2]string{{"core.repositoryFormatVersion", "1"}, {"extensions.refStorage", "files"}}, through: true},
		{name: "v1 known extensions", config: [][2]string{{"core.repositoryFormatVersion", "1"}, {"extensions.worktreeConfig", "true"}, {"extensions.preciousObjects", "true"}, {"extensions.partialClone", "origin"}}},
		{name: "v0 unknown extension", config: [][2]string{{"extensions.foo", "bar"}}},
		{name: "v1 unknown extension", config: [][2]string{{"core.repositoryFormatVersion", "1"}, {"extensions.foo", "bar"}}, through: true},
		{name: "v1 reftable", config: [][2]string{{"core.repositoryFormatVersion", "1"}, {"extensions.refStorage", "reftable"}}, through: true},
		{name: "v0 objectFormat", config: [][2]string{{"extensions.objectFormat", "sha256"}}, through: true},
		{name: "v1 unknown objectFormat", config: [][2]string{{"core.repositoryFormatVersion", "1"}, {"extensions.objectFormat", "sha512"}}, through: true},
		{name: "version 2", config: [][2]string{{"core.repositoryFormatVersion", "2"}}, through: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			gitEnv(t)
			dir := realpath(t, t.TempDir())
			git(t, dir, append([]string{"init", "-q", "-b", "main"}, c.init...)...)
			git(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
			for _, kv := range c.config {
				// git config itself refuses to run in some of these.
				git(t, dir, "config", "--file", ".git/config", kv[0], kv[1])
			}
			if f := readFormat(dir + "/.git"); (f.foreign != "") != c.through {
				t.Fatalf("readFormat: foreign %q, want read through git %v", f.foreign, c.through)
			}
			format, gitErr := runGit(dir, nil, nil, "rev-parse", "--show-object-format")
			r, err := Open(dir)
			if gitErr != nil {
				if err == nil {
					t.Fatalf("git refuses the repository (%v), Open does not", gitErr)
				}
				e := wantCode(t, err, contracts.CodeGit)
				said := strings.Join(strings.Fields(gitErr.Error()), " ")
				if !strings.Contains(e.Error(), "git cannot use this repository") || !strings.Contains(said, strings.SplitN(e.Error(), "): ", 2)[1]) {
					t.Errorf("Open: %v; git said %v", err, gitErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("git reads the repository, Open fails: %v", err)
			}
			defer r.Close()
			if r.ObjectFormat() != format {
				t.Errorf("object format %s, git says %s", r.ObjectFormat(), format)
			}
			if (r.Plumbing() != "") != c.through {
				t.Errorf("Plumbing() = %q, want read through git %v", r.Plumbing(), c.through)
			}
			head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
			if branch, h, err := r.Head(); err != nil || branch != "refs/heads/main" || h != head {
				t.Errorf("Head() = %s, %s, %v", branch, h, err)
			}
			if _, err := r.ReadCommit(head); err != nil {
				t.Errorf("ReadCommit(HEAD): %v", err)
			}
		})
	}
}

// Through git, HEAD reads as git reads it: on a branch, detached, and on
// an unborn branch.
func TestHeadThroughGit(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
		check := func(wantBranch string, want Hash) {
			t.Helper()
			branch, h, err := r.Head()
			if err != nil || branch != wantBranch || h != want {
				t.Errorf("Head() = %q, %s, %v; want %q, %s", branch, h, err, wantBranch, want)
			}
		}
		check("refs/heads/main", head)
		git(t, dir, "checkout", "-q", "--detach")
		check("", head)
		git(t, dir, "checkout", "-q", "--orphan", "unborn")
		check("refs/heads/unborn", Hash{})
		// A symbolic ref other than HEAD is followed too.
		git(t, dir, "symbolic-ref", "refs/liza/alias", "refs/heads/main")
		wantRef(t, r, "refs/liza/alias", head)
	})
}

// The switch reads like any git boolean, from any config file or from
// `git -c`.
func TestPlumbingSwitch(t *testing.T) {
	dir := newRepo(t)
	for _, c := range []struct {
		value string
		on    bool
	}{{"true", true}, {"yes", true}, {"1", true}, {"false", false}, {"off", false}, {"0", false}} {
		git(t, dir, "config", PlumbingKey, c.value)
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if (r.Plumbing() != "") != c.on {
			t.Errorf("%s = %s: Plumbing() = %q", PlumbingKey, c.value, r.Plumbing())
		}
		r.Close()
	}
	git(t, dir, "config", "--unset", PlumbingKey)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'"+strings.ToLower(PlumbingKey)+"'='true'")
	if r, err := Open(dir); err != nil || r.Plumbing() == "" {
		t.Errorf("git -c %s=true: %v, %+v", PlumbingKey, err, r)
	}
}
