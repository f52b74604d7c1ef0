// Package doctor answers "can a team run here?": one typed check per
// thing a team needs (git, the agent CLI and its credentials, the user and sandbox, hooks in
// task worktrees, the remote, the integration test). git liza doctor
// prints them; git liza agent and git liza run refuse to start on a
// failing one, before anything is registered or claimed.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/hooks"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/worktree"
)

// The levels of a check. A failing check stops a team; a warning names
// something a team can run without.
const (
	OK   = "ok"
	Warn = "warn"
	Fail = "fail"
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`
	Level  string `json:"level"`
	Detail string `json:"detail"`
	// Fix says what to do about a failure or a warning.
	Fix string `json:"fix,omitempty"`
	// Code is the exit-code class of a failure.
	Code contracts.Code `json:"-"`
}

// Failed reports whether the check stops a team.
func (c Check) Failed() bool { return c.Level == Fail }

// Err is a failed check as a *contracts.Error: its detail and its fix on
// one line.
func (c Check) Err() error {
	if !c.Failed() {
		return nil
	}
	msg := c.Detail
	if c.Fix != "" {
		msg += ": " + c.Fix
	}
	code := c.Code
	if code == 0 {
		code = contracts.CodeInvalid
	}
	return contracts.Errorf(code, "%s", msg)
}

// Request says what a team would run.
type Request struct {
	// Repo is the repository; nil outside one.
	Repo *refstore.Repo
	// Launch is the agent CLI the team would run.
	Launch agent.Launch
	// EUID is the effective user id the team runs as.
	EUID int
	// Getenv is the environment the agents get (default os.Getenv).
	Getenv func(string) string
}

// root is the project root the request is for, or "".
func (r Request) root() string {
	if r.Repo != nil {
		return r.Repo.MainWorkTree()
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return ""
}

// agentChecks are Agent's checks, then, when they pass, Auth's (with a
// network probe when probe is set).
func agentChecks(ctx context.Context, r Request, probe bool) []Check {
	checks := Agent(ctx, r.Launch, r.EUID)
	for _, c := range checks {
		if c.Failed() {
			return checks
		}
	}
	return append(checks, Auth(ctx, r.Launch, r.Getenv, r.root(), probe))
}

// Report is every check, in order.
type Report struct {
	Checks []Check `json:"checks"`
	// OK is true when no check failed: a team can run.
	OK bool `json:"ok"`
}

// Run makes every check.
func Run(ctx context.Context, r Request) Report {
	checks := []Check{Git()}
	checks = append(checks, agentChecks(ctx, r, true)...)
	checks = append(checks, Containment(r.Launch), MCP(ctx, r))
	if r.Repo != nil {
		branch := integrationBranch(r.Repo)
		checks = append(checks, Hooks(ctx, r.Repo, branch), Remote(ctx, r.Repo), IntegrationTest(ctx, r.Repo, branch), Setup(ctx, r.Repo, branch))
	} else {
		checks = append(checks, Check{Name: "repository", Level: Fail, Detail: "not in a git repository", Fix: "run git liza doctor in the project's checkout"})
	}
	checks = append(checks, Signers(r.Repo, r.Launch.Sandboxed)...)
	rep := Report{Checks: checks, OK: true}
	for _, c := range checks {
		if c.Failed() {
			rep.OK = false
		}
	}
	return rep
}

// Preflight is the part of Run that git liza agent and run make before they
// register anything: git, the agent CLI, the user, and that the CLI can
// authenticate (offline: its key variable, its login state, its
// settings; no request to its endpoint); it returns the first failure as
// an error (exit 5 for a missing or unusable dependency).
func Preflight(ctx context.Context, r Request) error {
	if err := refstore.CheckGit(); err != nil {
		return gitFailed(err).Err()
	}
	for _, c := range agentChecks(ctx, r, false) {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Git checks that git is installed and recent enough.
func Git() Check {
	if err := refstore.CheckGit(); err != nil {
		return gitFailed(err)
	}
	c := Check{Name: "git"}
	out, err := exec.Command("git", "version").Output()
	if err != nil {
		c.Level, c.Detail, c.Code = Fail, "git version: "+err.Error(), contracts.CodeMissingDep
		return c
	}
	c.Level, c.Detail = OK, strings.TrimSpace(string(out))
	return c
}

// gitFailed is the git check failed by refstore.CheckGit's err.
func gitFailed(err error) Check {
	return Check{
		Name: "git", Level: Fail, Detail: strings.TrimPrefix(err.Error(), "git-liza: "),
		Fix:  fmt.Sprintf("install git %d.%d or newer", refstore.MinGitMajor, refstore.MinGitMinor),
		Code: contracts.CodeMissingDep,
	}
}

// Agent checks the agent CLI: that it is installed and which version, and
// for a preset, that it can run as this user in this situation (a preset
// runs as root only with --sandboxed) with what its own sandbox needs.
func Agent(ctx context.Context, l agent.Launch, euid int) []Check {
	cli := Check{Name: "agent cli"}
	user := Check{Name: "user and sandbox", Level: OK}
	who := fmt.Sprintf("uid %d", euid)
	if euid == 0 {
		who = "root"
	}
	switch {
	case l.Sandboxed:
		user.Detail = who + ", --sandboxed: this machine is taken as an isolated sandbox; presets turn their CLI's own sandbox and prompts off"
	default:
		user.Detail = who + ": presets keep their CLI's own sandbox, with the worktree and the git directory's objects, refs and logs writable"
	}
	if len(l.Command) == 0 {
		cli.Level, cli.Detail, cli.Code = Fail, "no agent command", contracts.CodeInvalid
		return []Check{cli, user}
	}
	path, err := exec.LookPath(l.Command[0])
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		cli.Level, cli.Code = Fail, contracts.CodeMissingDep
		cli.Detail = fmt.Sprintf("agent command %s is not installed or not executable: %v", l.Command[0], err)
		if p := l.Preset; p != nil {
			cli.Fix = fmt.Sprintf("npm install -g %s@latest (%s or newer)", p.Package, p.MinVersion)
		}
		return []Check{cli, user}
	}
	if l.Preset == nil {
		cli.Level, cli.Detail = OK, path+" (a command of your own: it is run as given, the prompt last)"
		return []Check{cli, user}
	}
	res, err := l.Preset.Check(ctx, path, l.Sandboxed, euid)
	cli.Level, cli.Detail = OK, fmt.Sprintf("%s %s at %s", l.Preset.Program, res.Version, path)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "git-liza: ")
		c := &cli
		if res.Version != "" && !agent.VersionLess(res.Version, l.Preset.MinVersion) {
			// The CLI is fine; the situation is not.
			c = &user
		}
		c.Level, c.Code = Fail, contracts.CodeMissingDep
		c.Detail = msg
	}
	return []Check{cli, user}
}

// Containment says what keeps an agent from turning the repository's own
// files against the other agents and the supervisors (docs/trust.md,
// "Containment"): git-liza's own git ignores the programs, hooks and
// replace refs a repository names, whatever runs the agents; what keeps
// an agent from writing them is its sandbox, which only the presets
// without --sandboxed set up.
func Containment(l agent.Launch) Check {
	c := Check{Name: "containment", Level: OK}
	const own = "git-liza's git, and each agent's, ignore the programs, hooks and replace refs the repository's own files name"
	switch {
	case l.Sandboxed:
		c.Level = Warn
		c.Detail = "--sandboxed: every agent on this machine can write the git directory's config, hooks/, info/ and .git/liza/, and read every file the others can (their signing keys too); " + own + ", but only separate machines, containers or Unix users keep agents from each other"
		c.Fix = "run each agent in a container or as a Unix user of its own, with a signing key only it can read"
	case l.Preset == nil:
		c.Level = Warn
		c.Detail = "a command of your own runs in no sandbox of git-liza's: it can write the git directory's config, hooks/, info/ and .git/liza/; " + own
		c.Fix = "run it in a sandbox that leaves writable only the worktree and the git directory's objects, refs and logs, or use a preset"
	case l.Preset.Name == "gemini":
		c.Level = Warn
		c.Detail = "gemini's container gets the git directory's objects, refs and logs writable and its config, hooks/, info/ and .git/liza/ read-only (not verified: no container engine was run by git-liza's tests); " + own
	default:
		c.Detail = l.Preset.Name + "'s own sandbox keeps the git directory's config, hooks/, info/ and .git/liza/ read-only to agents; " + own
	}
	return c
}

// Hooks checks that git-liza's hooks run in task worktrees: ours, or
// git-liza's handler run by a hook manager (hooks.Status). git finds a
// worktree's hooks through core.hooksPath, which when relative is taken
// from the top of each worktree: the hooks must then be in the worktree's
// own files (committed on the integration branch), which is why git liza
// hooks install asks for an absolute one. Without hooks a team runs,
// unguarded: a warning. branch is the integration branch.
func Hooks(ctx context.Context, repo *refstore.Repo, branch string) Check {
	c := Check{Name: "hooks", Level: OK}
	if repo.Bare() {
		c.Detail = "bare repository: no task worktrees here"
		return c
	}
	loc, err := hooks.Locate(repo)
	if err != nil {
		c.Level, c.Detail, c.Fix = Warn, err.Error(), "git liza hooks status"
		return c
	}
	var where, missing []string
	if wts, err := worktree.List(ctx, repo); err == nil {
		for _, w := range wts {
			dir := w.Path
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(repo.MainWorkTree(), filepath.FromSlash(dir))
			}
			if fi, err := os.Stat(dir); !w.Exists || err != nil || !fi.IsDir() {
				continue
			}
			hdir, err := hooksDir(ctx, dir)
			if err != nil {
				continue
			}
			where = append(where, w.ID)
			if m := inactiveHooks(loc.At(hdir)); len(m) > 0 {
				missing = append(missing, fmt.Sprintf("%s (%s)", w.ID, strings.Join(m, ", ")))
			}
		}
	}
	if len(where) == 0 {
		// No task worktree yet: where the next one will look. With a
		// relative core.hooksPath that is its checkout of the integration
		// branch.
		where = append(where, "new task worktrees")
		if loc.Relative != "" {
			out, err := refstore.Run(ctx, repo.MainWorkTree(), nil, "show", branch+":"+path.Join(filepath.ToSlash(loc.Relative), hooks.PreCommit))
			if err != nil || !hooks.IsOurs(out) {
				missing = append(missing, "new task worktrees")
			}
		} else if m := inactiveHooks(loc); len(m) > 0 {
			missing = append(missing, "new task worktrees ("+strings.Join(m, ", ")+")")
		}
	}
	if len(missing) > 0 {
		c.Level = Warn
		c.Detail = "git-liza's hooks do not run in " + strings.Join(missing, "; ")
		c.Fix = "git liza hooks install"
		if loc.Relative != "" {
			c.Detail += fmt.Sprintf(" (core.hooksPath %s is relative: each worktree looks in its own %s)", loc.Relative, loc.Relative)
			c.Fix = loc.MakeAbsolute() + ", then git liza hooks install"
		}
		return c
	}
	c.Detail = "active in " + strings.Join(where, ", ")
	if loc.Relative != "" {
		c.Detail += " (core.hooksPath " + loc.Relative + ", relative: found in each worktree)"
	}
	return c
}

// hooksDir is where git run by an agent runs the hooks of the worktree at
// dir: git's own answer, which takes a relative core.hooksPath from that
// worktree.
func hooksDir(ctx context.Context, dir string) (string, error) {
	return refstore.AgentHooksDir(ctx, dir)
}

// inactiveHooks lists the client hooks that do not run git-liza's handler
// from loc: neither ours nor run by a hook manager.
func inactiveHooks(loc hooks.Location) []string {
	sts, err := loc.Status(hooks.ClientHooks)
	if err != nil {
		return slices.Clone(hooks.ClientHooks)
	}
	var missing []string
	for _, st := range sts {
		if st.Kind != hooks.Ours && st.Kind != hooks.RunBy {
			missing = append(missing, st.Name)
		}
	}
	return missing
}

// Remote checks the blackboard's remote in remote mode: that it answers,
// that this clone may push to it, and whether its server hook (the guard
// that checks every pushed state) is installed.
func Remote(ctx context.Context, repo *refstore.Repo) Check {
	c := Check{Name: "remote", Level: OK}
	name := repo.RemoteOf()
	if name == "" {
		c.Detail = "local mode (liza.remote is not set): the board is this repository's refs/liza/state"
		return c
	}
	url, _ := repo.Config("remote." + name + ".url")
	if _, err := repo.RemoteGit(ctx, name, "ls-remote", "--quiet", repo.PackProgram(name, false), "--", name, refstore.StateRef); err != nil {
		c.Level, c.Code = Fail, contracts.CodeGit
		c.Detail = fmt.Sprintf("remote %s (%s) does not answer: %s", name, url, contracts.FirstLine(err.Error()))
		c.Fix = "check its URL and your access, or unset liza.remote for local mode"
		return c
	}
	// A dry-run push negotiates with the remote's receive-pack, which needs
	// the right to push.
	if _, err := repo.RemoteGit(ctx, name, "push", "--dry-run", "--quiet", repo.PackProgram(name, true), "--", name, "HEAD:refs/liza/doctor-probe"); err != nil {
		c.Level, c.Code = Fail, contracts.CodeGit
		c.Detail = fmt.Sprintf("remote %s (%s) answers but refuses a push: %s", name, url, contracts.FirstLine(err.Error()))
		c.Fix = "get push access to it"
		return c
	}
	c.Detail = fmt.Sprintf("remote %s (%s) answers and takes pushes", name, url)
	if strings.HasPrefix(url, "git://") {
		if _, ok := refstore.Relay(); !ok {
			c.Level = Warn
			c.Detail += "; git-liza-relay is not installed: over git:// every exchange with the server waits about 40 ms (Nagle's algorithm and delayed acknowledgements)"
			c.Fix = "go install github.com/liza-dev/git-liza/git-liza-relay@latest"
			return c
		}
		c.Detail += "; its git:// connections go through git-liza-relay"
		if repo.ListsInProcess(name) {
			c.Detail += ", but for the board's listings and fetches, which git-liza makes itself"
		}
	}
	dir := strings.TrimPrefix(url, "file://")
	if !filepath.IsAbs(dir) {
		c.Detail += "; its server hook cannot be seen from here (run git liza hooks status --server on the server)"
		return c
	}
	if err := writable(dir); err != nil {
		c.Level, c.Code = Fail, contracts.CodeGit
		c.Detail = fmt.Sprintf("remote %s at %s is not writable by this user: %v", name, dir, err)
		c.Fix = "give this user write access to it"
		return c
	}
	rr, err := refstore.Open(dir)
	if err != nil {
		return c
	}
	loc, err := hooks.Locate(rr)
	if err != nil {
		return c
	}
	if sts, err := loc.Status([]string{hooks.PreReceive}); err == nil && len(sts) == 1 && sts[0].Kind == hooks.Ours {
		if sts[0].Current {
			c.Detail += "; its server hook is installed"
			return c
		}
		// An older script may leave pushes unchecked that this version's
		// checks (which branch is the integration branch, task branches).
		c.Level = Warn
		c.Detail += "; its server hook was installed by another version of git-liza"
		c.Fix = "git -C " + dir + " liza hooks install --server"
		return c
	}
	c.Level = Warn
	c.Detail += "; its server hook is not installed: pushes to its refs/liza/state are not checked"
	c.Fix = "git -C " + dir + " liza hooks install --server"
	return c
}

// writable checks that this user can create files in a repository's
// object store.
func writable(dir string) error {
	objects := filepath.Join(dir, "objects")
	if fi, err := os.Stat(objects); err != nil || !fi.IsDir() {
		objects = filepath.Join(dir, ".git", "objects")
	}
	f, err := os.CreateTemp(objects, ".liza-doctor-")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// IntegrationTest checks scripts/integration-test.sh on the integration
// branch, which git liza merge runs on every merge result: without it
// merges are not tested (a warning); not executable, agents that run it
// as ./scripts/integration-test.sh fail (a warning: merge runs it with sh).
// branch is the integration branch.
func IntegrationTest(ctx context.Context, repo *refstore.Repo, branch string) Check {
	c := Check{Name: "integration test", Level: OK}
	const script = "scripts/integration-test.sh"
	out, err := refstore.Run(ctx, repo.Dir(), nil, "ls-tree", "refs/heads/"+branch, "--", script)
	if err != nil {
		out, err = refstore.Run(ctx, repo.Dir(), nil, "ls-tree", "HEAD", "--", script)
		if err != nil {
			c.Level, c.Detail = Warn, "no integration branch or HEAD to look in"
			return c
		}
	}
	f := strings.Fields(string(out))
	switch {
	case len(f) == 0:
		c.Level, c.Detail = Warn, script+" is not on "+branch+": merges are not tested"
		c.Fix = "add an executable " + script + " that runs the project's tests"
	case f[0] != "100755":
		c.Level, c.Detail = Warn, script+" on "+branch+" is not executable (mode "+f[0]+")"
		c.Fix = "git update-index --chmod=+x " + script + " and commit it"
	default:
		c.Detail = script + " on " + branch + " is executable; merges run it"
	}
	return c
}

// integrationBranch is the board's integration branch: the state's (read
// from its header, not the whole board), else what init would choose.
func integrationBranch(repo *refstore.Repo) string {
	if tip, ok, err := repo.ReadRef(refstore.StateRef); err == nil && ok {
		if snap, err := cas.ReadSnapshot(repo, tip); err == nil {
			if st, err := snap.Header(); err == nil && st.Config.IntegrationBranch != "" {
				return st.Config.IntegrationBranch
			}
		}
	}
	if b, ok := repo.Config("liza.integrationBranch"); ok && b != "" {
		return b
	}
	return contracts.DefaultConfig().IntegrationBranch
}
