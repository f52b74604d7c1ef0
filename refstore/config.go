package refstore

import (
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Config returns the value git would give for key ("user.name",
// "remote.origin.url"), reading the same files in the same order: system,
// global, repository, worktree, then `git -c` values passed down in
// GIT_CONFIG_PARAMETERS. It reads files instead of running git config so
// that hot paths stay one process; include.path is followed, includeIf is
// not.
func (r *Repo) Config(key string) (string, bool) { return r.configValue(key, false) }

// ConfigAnyScope is Config for a key that names a program, with the
// repository's own files counted too: what git run by a person (or an
// agent) in this repository uses, as opposed to what git-liza's own git
// processes use (see contain.go). For any other key it is Config.
func (r *Repo) ConfigAnyScope(key string) (string, bool) { return r.configValue(key, true) }

// configValue is the last value of key: from every scope with anyScope
// set; else a setting that names a program is taken only from where the
// user set it, never from the repository's own files (contain.go).
func (r *Repo) configValue(key string, anyScope bool) (string, bool) {
	r.configOnce.Do(r.loadConfig)
	want := normalKey(key)
	val, found := "", false
	protect := !anyScope && programKey(want)
	for _, e := range r.config {
		if e.Key == want && (!protect || e.Scope.protected()) {
			val, found = e.Value, true
		}
	}
	if v, ok := configParameters()[want]; ok {
		val, found = v, true
	}
	return val, found
}

// loadConfig reads the config files, or asks git in a repository read
// through git's plumbing.
func (r *Repo) loadConfig() {
	if r.plumbing != "" {
		r.config = r.gitConfig()
	} else {
		r.config = loadConfigs(r)
	}
}

// normalKey spells a key as configEntry does: section and name in lower
// case, the subsection as given.
func normalKey(key string) string {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	if first == last {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

func loadConfigs(r *Repo) []configEntry {
	files := []string{filepath.Join(r.CommonDir, "config"), filepath.Join(r.GitDir, "config.worktree")}
	return readConfigFiles(files, scopeRepo, loadUserConfigs())
}

// readConfigFiles appends the entries of files, each read once, to out,
// as read from scope. A file that is missing or does not parse is
// skipped, as if empty; git itself would refuse to run in the second case.
func readConfigFiles(files []string, scope configScope, out []configEntry) []configEntry {
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f] || f == os.DevNull {
			continue
		}
		seen[f] = true
		n := len(out)
		out, _ = parseConfigFile(f, 0, out)
		for j := n; j < len(out); j++ {
			out[j].Scope = scope
		}
	}
	return out
}

// loadUserConfigs reads the config files git reads for every repository:
// the system's and the user's.
func loadUserConfigs() []configEntry {
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		sys := os.Getenv("GIT_CONFIG_SYSTEM")
		if sys == "" {
			sys = "/etc/gitconfig"
		}
		files = append(files, sys)
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		home, _ := os.UserHomeDir()
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	return readConfigFiles(files, scopeUser, nil)
}

// configParameters is the command line's configuration of this process
// (see commandConfig).
func configParameters() map[string]string { return commandConfig(os.Getenv) }

// commandConfig parses the configuration git takes from an environment,
// read with getenv: GIT_CONFIG_COUNT with its GIT_CONFIG_KEY_<n> and
// GIT_CONFIG_VALUE_<n> pairs (what a parent process gives its children
// without touching any file: see SigningEnv, ContainEnv), then
// GIT_CONFIG_PARAMETERS, where git hands the -c options of
// `git -c k=v liza ...` to the subcommand ('k'='v' pairs, single-quoted,
// space separated), which win.
func commandConfig(getenv func(string) string) map[string]string {
	out := map[string]string{}
	n, _ := strconv.Atoi(getenv("GIT_CONFIG_COUNT"))
	for i := range min(n, maxConfigCount) {
		if k := getenv("GIT_CONFIG_KEY_" + strconv.Itoa(i)); k != "" {
			out[normalKey(k)] = getenv("GIT_CONFIG_VALUE_" + strconv.Itoa(i))
		}
	}
	maps.Copy(out, configParametersOf(getenv("GIT_CONFIG_PARAMETERS")))
	return out
}

// maxConfigCount bounds the GIT_CONFIG_COUNT pairs read.
const maxConfigCount = 1 << 16

// configParametersOf parses a value of GIT_CONFIG_PARAMETERS.
func configParametersOf(s string) map[string]string {
	out := map[string]string{}
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ")
		tok, rest, ok := quoted(s)
		if !ok {
			break
		}
		s = rest
		k, v := tok, ""
		if strings.HasPrefix(s, "='") {
			if v, s, ok = quoted(s[1:]); !ok {
				break
			}
		} else if strings.HasPrefix(s, "=") {
			// `git -c key` (no value) is exported as 'key'= : a boolean true.
			s, v = s[1:], "true"
		} else if i := strings.IndexByte(tok, '='); i >= 0 {
			k, v = tok[:i], tok[i+1:]
		}
		out[normalKey(k)] = v
	}
	return out
}

// quoted reads one shell-single-quoted word ('it'\”s' style).
func quoted(s string) (word, rest string, ok bool) {
	var b strings.Builder
	for len(s) > 0 && s[0] == '\'' {
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", "", false
		}
		b.WriteString(s[1 : 1+end])
		s = s[2+end:]
		if strings.HasPrefix(s, "\\'") {
			b.WriteByte('\'')
			s = s[2:]
			continue
		}
		return b.String(), s, true
	}
	return "", "", false
}
