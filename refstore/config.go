package refstore

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"
)

// Config returns the value git would give for key ("user.name",
// "remote.origin.url"), reading the same files in the same order: system,
// global, repository, worktree, then `git -c` values passed down in
// GIT_CONFIG_PARAMETERS. It reads files instead of running git config so
// that hot paths stay one process; include directives are not followed.
func (r *Repo) Config(key string) (string, bool) {
	if r.config == nil {
		r.config = loadConfigs(r)
	}
	section, sub, name := splitKey(key)
	val, found := "", false
	for _, c := range r.config {
		s := c.Section(section)
		var opts config.Options
		if sub == "" {
			opts = s.Options
		} else if s.HasSubsection(sub) {
			opts = s.Subsection(sub).Options
		}
		for _, o := range opts {
			if o.IsKey(name) {
				val, found = o.Value, true
			}
		}
	}
	if v, ok := configParameters()[strings.ToLower(key)]; ok {
		val, found = v, true
	}
	return val, found
}

func splitKey(key string) (section, sub, name string) {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return key, "", ""
	}
	if first == last {
		return key[:first], "", key[last+1:]
	}
	return key[:first], key[first+1 : last], key[last+1:]
}

func loadConfigs(r *Repo) []*config.Config {
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
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
	files = append(files, filepath.Join(r.CommonDir, "config"), filepath.Join(r.GitDir, "config.worktree"))
	var out []*config.Config
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f] {
			continue
		}
		seen[f] = true
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		c := config.New()
		if config.NewDecoder(fh).Decode(c) == nil {
			out = append(out, c)
		}
		fh.Close()
	}
	return out
}

// configParameters parses GIT_CONFIG_PARAMETERS, where git hands the -c
// options of `git -c k=v liza ...` to the subcommand: 'k'='v' pairs,
// single-quoted, space separated.
func configParameters() map[string]string {
	out := map[string]string{}
	s := os.Getenv("GIT_CONFIG_PARAMETERS")
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
		out[strings.ToLower(k)] = v
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
