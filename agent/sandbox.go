package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/refstore"
)

// sessionDirs is what a preset needs to know of a session in dir: the
// directories it must write besides dir, those that must stay read-only
// inside them, and whether it needs the network.
//
// A commit and git-liza's own commands write the repository's objects,
// refs and reflogs, and the checkout's own git directory (a linked
// worktree's index and HEAD): those are writable, and nothing else of the
// git directory. Its config, hooks/ and info/ name programs that every
// other git process would run, and liza/ holds the supervisors' own
// files (the integration test's checkout, reviewers' checkouts, prompts,
// session logs): the agent may read them, never write them. A remote on
// this machine is writable the same way (a push writes its objects and
// refs), its config and hooks (the server's guard) not.
func (s *sup) sessionDirs(dir string) Session {
	ses := Session{Dir: dir, Network: s.Remote}
	add := func(list *[]string, p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	gitDir := func(d string) {
		for _, sub := range writableGitDirs {
			p := filepath.Join(d, sub)
			// A missing one (no reflog yet) is made now: a sandbox can
			// only open up what exists.
			_ = os.MkdirAll(p, 0o777)
			add(&ses.Writable, p)
		}
		for _, sub := range protectedGitDirs {
			p := filepath.Join(d, sub)
			if sub == refstore.LizaDir || sub == "info" || sub == "hooks" {
				_ = os.MkdirAll(p, 0o777)
			}
			if _, err := os.Lstat(p); err == nil {
				add(&ses.Protected, p)
			}
		}
	}
	gitDir(s.Repo.CommonDir)
	if gd, err := refstore.CheckoutGitDir(dir); err == nil && filepath.Clean(gd) != filepath.Clean(s.Repo.CommonDir) {
		add(&ses.Writable, gd)
	}
	if s.Remote {
		if r := localRemote(s.Repo); r != "" {
			gitDir(r)
		}
	}
	return ses
}

// writableGitDirs are the parts of a git directory an agent writes;
// protectedGitDirs those it must not, even where its sandbox lets it write
// around them (a planner runs in the main checkout, which holds .git).
var (
	writableGitDirs  = []string{"objects", "refs", "logs"}
	protectedGitDirs = []string{"config", "config.worktree", "hooks", "info", refstore.LizaDir, "HEAD", "index", "modules", "shallow", "commondir"}
)

// localRemote is the directory of the blackboard's remote when it is on
// this machine (a path or a file:// URL), else "".
func localRemote(repo *refstore.Repo) string {
	name := repo.RemoteOf()
	if name == "" {
		return ""
	}
	url, _ := repo.Config("remote." + name + ".url")
	if u, ok := strings.CutPrefix(url, "file://"); ok {
		url = u
	}
	if !filepath.IsAbs(url) {
		return ""
	}
	if fi, err := os.Stat(url); err == nil && fi.IsDir() {
		return url
	}
	return ""
}
