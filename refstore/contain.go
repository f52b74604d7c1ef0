package refstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Containment. A linked worktree commits into the repository's common git
// directory, so whoever may commit in a task worktree (an agent) can
// usually also write the files of that directory with which git runs
// programs: `config` (core.fsmonitor, filter and merge drivers, a remote's
// upload-pack, ...), `hooks/`, `info/attributes` (which name the drivers),
// replace refs and grafts. Written from one worktree, they would run in
// every git process any other agent or supervisor starts. So every git
// process git-liza starts is told, on its environment, to ignore them:
//
//   - settings that name a program, or a file git would trust, are taken
//     only from where the user set them (the system's and the user's
//     config, the command line), never from the repository's own files
//     (its config, config.worktree and what they include). Where the
//     repository sets one, git-liza passes git the user's value or, when
//     the user set none, a value that runs nothing (programKeys);
//   - hooks run only from a core.hooksPath the user set; the repository's
//     hooks directory (git-liza's own hooks included: git-liza's processes
//     need none of them) is replaced by a directory that does not exist;
//   - replace refs, grafts and the commit-graph file, which change what
//     commits git sees, are not read.
//
// The settings go on the environment (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n,
// GIT_CONFIG_VALUE_n), which outranks every config file and which git
// does not hand to the git of a local remote (`git push /path` runs the
// remote's receive-pack with the remote's own config and hooks: the
// server's guard).

// LizaDir is git-liza's own directory in the common git directory.
const LizaDir = "liza"

// configScope says where a config entry was read.
type configScope uint8

const (
	// scopeRepo: the repository's config, config.worktree, or a file they
	// include. The zero value: an entry of unknown origin is not trusted.
	scopeRepo configScope = iota
	// scopeUser: the system's or the user's config file.
	scopeUser
	// scopeCommand: `git -c` (GIT_CONFIG_PARAMETERS) or GIT_CONFIG_COUNT.
	scopeCommand
)

func (s configScope) protected() bool { return s != scopeRepo }

// gitScope maps the scope names of `git config --show-scope`.
func gitScope(name string) configScope {
	switch name {
	case "system", "global":
		return scopeUser
	case "command":
		return scopeCommand
	}
	return scopeRepo
}

// programSetting is a class of config keys with which git runs a program,
// trusts a file, or connects somewhere, and the value that does none of
// it. Section and name are in lower case; sub is "" (no subsection), "*"
// (any subsection) or "?" (with or without one); a name ending in "*" is a
// prefix, one starting with "*" a suffix.
type programSetting struct {
	section, sub, name string
	neutral            string
	// multi: a list that an empty value resets (credential.helper).
	multi bool
}

// programKeys is every setting of git's documentation (git-config(1),
// githooks(5), gitattributes(5), as of git 2.50) with which git runs a
// program, reads a further file it trusts, or sends credentials through
// a proxy. Most concern commands git-liza never runs; they are listed so
// that none is forgotten where git-liza does run one. The README lists
// them with the reasons.
var programKeys = []programSetting{
	{section: "core", name: "fsmonitor", neutral: "false"},
	{section: "core", name: "hookspath", neutral: os.DevNull},
	{section: "core", name: "sshcommand", neutral: "ssh"},
	{section: "core", name: "gitproxy", neutral: ""},
	{section: "core", name: "askpass", neutral: ""},
	{section: "core", name: "editor", neutral: ":"},
	{section: "sequence", name: "editor", neutral: ":"},
	{section: "core", name: "pager", neutral: "cat"},
	{section: "pager", name: "*", neutral: "false"},
	{section: "core", name: "alternaterefscommand", neutral: ""},
	{section: "core", name: "attributesfile", neutral: os.DevNull},
	{section: "credential", sub: "?", name: "helper", multi: true},
	{section: "diff", name: "external", neutral: refusedDiff},
	{section: "diff", sub: "*", name: "command", neutral: refusedDiff},
	{section: "diff", sub: "*", name: "textconv", neutral: "cat"},
	{section: "filter", sub: "*", name: "clean", neutral: "cat"},
	{section: "filter", sub: "*", name: "smudge", neutral: "cat"},
	{section: "filter", sub: "*", name: "process", neutral: ""},
	{section: "filter", sub: "*", name: "required", neutral: "false"},
	{section: "merge", sub: "*", name: "driver", neutral: "git merge-file %A %O %B"},
	{section: "difftool", sub: "*", name: "cmd", neutral: "false"},
	{section: "difftool", sub: "*", name: "path", neutral: "false"},
	{section: "mergetool", sub: "*", name: "cmd", neutral: "false"},
	{section: "mergetool", sub: "*", name: "path", neutral: "false"},
	{section: "gpg", name: "program", neutral: "gpg"},
	{section: "gpg", sub: "openpgp", name: "program", neutral: "gpg"},
	{section: "gpg", sub: "x509", name: "program", neutral: "gpgsm"},
	{section: "gpg", sub: "ssh", name: "program", neutral: "ssh-keygen"},
	{section: "gpg", sub: "ssh", name: "defaultkeycommand", neutral: ""},
	{section: "gpg", sub: "ssh", name: "allowedsignersfile", neutral: os.DevNull},
	{section: "gpg", sub: "ssh", name: "revocationfile", neutral: os.DevNull},
	{section: "remote", sub: "*", name: "uploadpack", neutral: "git-upload-pack"},
	{section: "remote", sub: "*", name: "receivepack", neutral: "git-receive-pack"},
	{section: "remote", sub: "*", name: "proxy", neutral: ""},
	{section: "http", sub: "?", name: "proxy", neutral: ""},
	{section: "http", sub: "?", name: "sslverify", neutral: "true"},
	{section: "protocol", sub: "?", name: "allow", neutral: "never"},
	{section: "submodule", name: "recurse", neutral: "false"},
	{section: "submodule", sub: "*", name: "update", neutral: "none"},
	{section: "fetch", name: "recursesubmodules", neutral: "false"},
	{section: "push", name: "recursesubmodules", neutral: "no"},
	{section: "trailer", sub: "*", name: "command", neutral: ""},
	{section: "trailer", sub: "*", name: "cmd", neutral: ""},
	{section: "sendemail", sub: "?", name: "*cmd", neutral: ""},
	{section: "sendemail", sub: "?", name: "smtpserver", neutral: ""},
	{section: "web", name: "browser", neutral: ""},
	{section: "browser", sub: "*", name: "cmd", neutral: ""},
	{section: "browser", sub: "*", name: "path", neutral: ""},
	{section: "man", sub: "*", name: "cmd", neutral: ""},
	{section: "man", sub: "*", name: "path", neutral: ""},
	{section: "guitool", sub: "*", name: "cmd", neutral: ""},
	{section: "uploadpack", name: "packobjectshook", neutral: ""},
	// git-liza's own: where its notifications go, what it runs for them;
	// how much of the record of agents' sessions is kept (an agent that set
	// it low would have its own sessions' logs removed).
	{section: "liza", name: "notifyurl", neutral: ""},
	{section: "liza", name: "notifycommand", neutral: ""},
	{section: "liza", name: "sessionlogsmax", neutral: ""},
}

// refusedDiff stands for an external diff program the repository names:
// it says so and fails, so that a diff is never shown empty (which a
// reviewer could take for no change) and never through that program.
const refusedDiff = `sh -c 'echo "git-liza: this repository'"'"'s config names an external diff program, which git-liza does not run: git diff --no-ext-diff shows the change" >&2; exit 1' --`

// noGrafts is where git is told the graft file is: nowhere (an empty file
// would make git warn that grafts are deprecated).
var noGrafts = filepath.Join(os.DevNull, "no-grafts")

// alwaysKeys are set on every git process git-liza starts, whether the
// repository sets them or not: hooks are files, not settings; a forged
// commit-graph file changes the parents git sees; the ext:: transport runs
// any command its URL names.
var alwaysKeys = []string{"core.hookspath", "core.fsmonitor", "core.commitgraph", "protocol.ext.allow"}

// alwaysNeutral gives the neutral values of alwaysKeys that are not in
// programKeys or differ there.
var alwaysNeutral = map[string]string{"core.commitgraph": "false", "protocol.ext.allow": "never"}

// splitKey cuts a normalised key into section, subsection and name.
func splitKey(key string) (section, sub, name string) {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return key, "", ""
	}
	if first == last {
		return key[:first], "", key[first+1:]
	}
	return key[:first], key[first+1 : last], key[last+1:]
}

// programSettingOf returns the class key (normalised) belongs to.
func programSettingOf(key string) (programSetting, bool) {
	section, sub, name := splitKey(key)
	for _, p := range programKeys {
		if p.section != section {
			continue
		}
		switch p.sub {
		case "":
			if sub != "" {
				continue
			}
		case "*":
			if sub == "" {
				continue
			}
		case "?":
		default:
			if p.sub != sub {
				continue
			}
		}
		if pre, ok := strings.CutSuffix(p.name, "*"); ok {
			if strings.HasPrefix(name, pre) {
				return p, true
			}
		} else if suf, ok := strings.CutPrefix(p.name, "*"); ok {
			if strings.HasSuffix(name, suf) {
				return p, true
			}
		} else if p.name == name {
			return p, true
		}
	}
	return programSetting{}, false
}

// programKey reports whether key (normalised) names a program or a file
// git trusts: such a key is read only from protected scopes.
func programKey(key string) bool {
	_, ok := programSettingOf(key)
	return ok
}

// fileStamp identifies a version of a file cheaply: a changed config file
// is scanned again.
type fileStamp struct {
	path  string
	size  int64
	mtime int64
	ino   uint64
	found bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{path: path}
	}
	return fileStamp{path: path, size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: inodeOf(fi), found: true}
}

// repoScan is what one repository's own config files set among the
// program keys, as of the files' stamps.
type repoScan struct {
	commonDir string
	stamps    []fileStamp
	keys      []string
}

var contain struct {
	sync.Mutex
	repos []*repoScan
}

// registerContainment adds r's files to what every git process git-liza
// starts is protected from.
func registerContainment(r *Repo) {
	contain.Lock()
	defer contain.Unlock()
	for _, s := range contain.repos {
		if s.commonDir == r.CommonDir {
			return
		}
	}
	contain.repos = append(contain.repos, &repoScan{commonDir: r.CommonDir})
}

// current makes sure s reflects the files as they are now.
func (s *repoScan) current() {
	if len(s.stamps) > 0 {
		same := true
		for _, st := range s.stamps {
			if stampOf(st.path) != st {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	s.scan()
}

// scan reads the repository's config files (the common config, every
// config.worktree when extensions.worktreeConfig may be on, and what they
// include, conditionally or not) and keeps the program keys they set.
func (s *repoScan) scan() {
	files := []string{filepath.Join(s.commonDir, "config"), filepath.Join(s.commonDir, "config.worktree")}
	if wts, err := os.ReadDir(filepath.Join(s.commonDir, "worktrees")); err == nil {
		for _, wt := range wts {
			files = append(files, filepath.Join(s.commonDir, "worktrees", wt.Name(), "config.worktree"))
		}
	}
	s.stamps = s.stamps[:0]
	s.stamps = append(s.stamps, stampOf(filepath.Join(s.commonDir, "worktrees")))
	s.keys = s.keys[:0]
	seen := map[string]bool{}
	for _, f := range files {
		var read []string
		entries, err := parseConfigFileIf(f, 0, true, nil, &read)
		for _, p := range read {
			s.stamps = append(s.stamps, stampOf(p))
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			// A file this reader cannot parse is not taken for empty: what
			// git makes of it decides (and where git cannot parse it
			// either, git runs nothing in this repository at all).
			entries = gitConfigFile(f)
		}
		for _, e := range entries {
			if programKey(e.Key) && !seen[e.Key] {
				seen[e.Key] = true
				s.keys = append(s.keys, e.Key)
			}
		}
	}
}

// gitConfigFile lists the entries git reads from the config file f and
// what it includes.
func gitConfigFile(f string) []configEntry {
	out, err := runUncontained(context.Background(), filepath.Dir(f), "config", "--file", f, "--includes", "--list", "--name-only", "-z")
	if err != nil {
		return nil
	}
	var entries []configEntry
	for _, k := range strings.Split(string(out), "\x00") {
		if k != "" {
			entries = append(entries, configEntry{Key: normalKey(k)})
		}
	}
	return entries
}

// ContainEnv returns base (the process's environment when nil) with what
// makes a git process ignore what the repositories this process opened set
// to run programs (see the top of this file). Every git process git-liza
// starts gets it; a supervisor gives it to its agent's sessions too.
func ContainEnv(base []string) []string { return containEnv(base, true, nil) }

// containGit is ContainEnv for the git command args: a transport command
// also connects to git:// servers through git-liza-relay (relayFor).
func containGit(base, args []string) []string { return containEnv(base, true, args) }

// AgentEnv is ContainEnv for an agent's session: its git runs the
// repository's hooks when hooks is set (a coder's commits run git-liza's
// pre-commit guard), and no hook otherwise. The agent's sandbox, not this,
// keeps it from writing the hooks directory (see agent/preset.go); this
// keeps what another agent planted in the repository's config from
// running in this agent's git, replace refs from changing what it reviews.
func AgentEnv(base []string, hooks bool) []string { return containEnv(base, !hooks, nil) }

func containEnv(base []string, noHooks bool, args []string) []string {
	if base == nil {
		base = os.Environ()
	}
	contain.Lock()
	keys := slices.Clone(alwaysKeys)
	if !noHooks {
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == "core.hookspath" })
	}
	for _, s := range contain.repos {
		s.current()
		for _, k := range s.keys {
			if !slices.Contains(keys, k) && (noHooks || k != "core.hookspath") {
				keys = append(keys, k)
			}
		}
	}
	contain.Unlock()
	// The user's own files are read each time (a few small files beside
	// starting a process), so that a change to them counts at once.
	user := loadUserConfigs()

	command := commandConfig(func(k string) string { return envValue(base, k) })
	var pairs [][2]string
	extra := []string{"GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=" + noGrafts}
	for _, k := range keys {
		var vals []string
		for _, e := range user {
			if e.Key == k {
				vals = append(vals, e.Value)
			}
		}
		p, _ := programSettingOf(k)
		neutral, ok := alwaysNeutral[k]
		if !ok {
			neutral = p.neutral
		}
		_, onCommandLine := command[k]
		switch {
		case onCommandLine:
			// The command line (git -c, or who started git-liza) decides.
			continue
		case k == "core.sshcommand" && envValue(base, "GIT_SSH_COMMAND") != "":
			continue
		case k == "core.sshcommand" && len(vals) == 0 && envValue(base, "GIT_SSH") != "":
			vals = []string{shellQuote(envValue(base, "GIT_SSH"))}
		case k == "core.gitproxy":
			// GIT_PROXY_COMMAND outranks every core.gitProxy: empty, it
			// runs none.
			if envValue(base, "GIT_PROXY_COMMAND") == "" && len(vals) == 0 {
				extra = append(extra, "GIT_PROXY_COMMAND=")
			}
			continue
		}
		if p.multi {
			pairs = append(pairs, [2]string{k, ""})
			for _, v := range vals {
				pairs = append(pairs, [2]string{k, v})
			}
			continue
		}
		if len(vals) > 0 {
			pairs = append(pairs, [2]string{k, vals[len(vals)-1]})
		} else {
			pairs = append(pairs, [2]string{k, neutral})
		}
	}
	if relay, ok := relayFor(base, args, user, command); ok {
		// It replaces a neutralised core.gitProxy of the repository's.
		extra = append(slices.DeleteFunc(extra, func(kv string) bool { return strings.HasPrefix(kv, "GIT_PROXY_COMMAND=") }),
			"GIT_PROXY_COMMAND="+relay)
	}
	return withConfigPairs(base, pairs, extra)
}

// withConfigPairs appends pairs to base as GIT_CONFIG_COUNT entries after
// any base already has, and extra variables, replacing those of the same
// names.
func withConfigPairs(base []string, pairs [][2]string, extra []string) []string {
	n, _ := strconv.Atoi(envValue(base, "GIT_CONFIG_COUNT"))
	out := make([]string, 0, len(base)+2*len(pairs)+len(extra)+1)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if k == "GIT_CONFIG_COUNT" || slices.ContainsFunc(extra, func(x string) bool { return strings.HasPrefix(x, k+"=") }) {
			continue
		}
		out = append(out, kv)
	}
	for i, p := range pairs {
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n+i, p[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n+i, p[1]))
	}
	out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(n+len(pairs)))
	return append(out, extra...)
}

// envValue is the value of name in env (the last one wins, as for exec).
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// PackProgram is the option that names the program a fetch (upload-pack)
// or a push (receive-pack) runs on remote's side. git takes the first
// remote.NAME.uploadpack it reads, so the repository's own value would win
// over one on the environment: the option on the command line outranks
// both. The user's own setting is kept.
func (r *Repo) PackProgram(remote string, push bool) string {
	key, opt, def := "uploadpack", "--upload-pack=", "git-upload-pack"
	if push {
		key, opt, def = "receivepack", "--receive-pack=", "git-receive-pack"
	}
	if v, ok := r.Config("remote." + remote + "." + key); ok && v != "" {
		return opt + v
	}
	return opt + def
}
