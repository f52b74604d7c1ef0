package refstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
)

// PlumbingKey is the git config switch that makes git-liza read the
// repository through git's plumbing even when it knows the format:
// `git config liza.readThroughGit true`. The tests use it to run the
// fallback path in repositories git 2.39 can make.
const PlumbingKey = "liza.readThroughGit"

// repoFormat is what the repository's own config file says about how git
// stores its objects and refs (gitrepository-layout(5), "extensions").
type repoFormat struct {
	algo hashAlgo
	// foreign says what this package does not know how to read (an
	// extension, a format version), or is empty when it reads the
	// repository itself.
	foreign string
}

// Extensions by how git takes them. The first kind it honours in a
// repository of format version 0 or 1; none changes what this package reads
// (partialClone means objects may be missing: see clones.go). The second
// kind git knows only in version 1 and refuses in version 0. Any other
// extension git ignores in version 0, and refuses in version 1 when it does
// not know it.
var (
	anyVersionExtensions = []string{"noop", "preciousobjects", "partialclone", "worktreeconfig"}
	v1OnlyExtensions     = []string{"noop-v1", "objectformat", "refstorage", "compatobjectformat"}
)

// readFormat reads core.repositoryFormatVersion and extensions.* from the
// repository's config file, as git does before anything else: from that
// file alone, includes not followed.
func readFormat(commonDir string) repoFormat {
	f := repoFormat{}
	data, err := ReadFile(filepath.Join(commonDir, "config"))
	if errors.Is(err, fs.ErrNotExist) {
		return f
	}
	if err != nil {
		f.foreign = fmt.Sprintf("its config cannot be read (%v)", err)
		return f
	}
	entries, err := parseConfig(string(data))
	if err != nil {
		f.foreign = fmt.Sprintf("its config does not parse (%v)", err)
		return f
	}
	version := "0"
	ext := map[string]string{}
	var names []string
	for _, e := range entries {
		if e.Key == "core.repositoryformatversion" {
			version = strings.TrimSpace(e.Value)
		} else if name, ok := strings.CutPrefix(e.Key, "extensions."); ok {
			if _, seen := ext[name]; !seen {
				names = append(names, name)
			}
			ext[name] = e.Value
		}
	}
	if version != "0" && version != "1" {
		f.foreign = "core.repositoryFormatVersion is " + version
		return f
	}
	for _, name := range names {
		switch {
		case slices.Contains(anyVersionExtensions, name), name == "noop-v1" && version == "1":
		case version == "0" && slices.Contains(v1OnlyExtensions, name):
			f.foreign = "extensions." + name + " is set in a version 0 repository"
			return f
		case version == "0":
			// git ignores an extension it does not know here: so does
			// this reader.
		case name == "objectformat":
			a, ok := parseAlgo(strings.ToLower(ext[name]))
			if !ok {
				f.foreign = "extensions.objectformat = " + ext[name]
				return f
			}
			f.algo = a
		default:
			// refStorage among them, even "files": git before 2.45
			// refuses it, and git's answer is the one to give.
			f.foreign = "extensions." + name + " = " + ext[name]
			return f
		}
	}
	return f
}

// usePlumbing switches the repository to reading through git: objects
// with `git cat-file --batch-command`, refs with `git for-each-ref` and
// `git rev-parse`, config with `git config --list`, new objects with
// `git hash-object -w`. It asks
// git for the object format first; a repository git itself refuses is
// reported with git's own words.
func (r *Repo) usePlumbing(why string) error {
	out, err := r.Git(context.Background(), "rev-parse", "--show-object-format")
	var ge *GitError
	if errors.As(err, &ge) {
		msg := strings.Join(strings.Fields(strings.TrimSpace(ge.Stderr)), " ")
		return contracts.Errorf(contracts.CodeGit, "git cannot use this repository (%s): %s", why, msg)
	}
	if err != nil {
		return err
	}
	a, ok := parseAlgo(strings.TrimSpace(string(out)))
	if !ok {
		return contracts.Errorf(contracts.CodeGit, "git-liza does not know the object format %q of this repository", strings.TrimSpace(string(out)))
	}
	r.algo, r.plumbing = a, why
	r.odb.algo = a
	r.odb.plumbing = true
	// The config may have been read from the files already, for the switch.
	r.configOnce.Do(func() {})
	r.config = r.gitConfig()
	return nil
}

// Plumbing says why the repository is read through git's plumbing, or is
// empty when git-liza reads git's files itself.
func (r *Repo) Plumbing() string { return r.plumbing }

// ObjectFormat is the repository's object format: "sha1" or "sha256".
func (r *Repo) ObjectFormat() string { return r.algo.String() }

// gitConfig reads every config variable through `git config --list
// --show-scope -z`, which gives "scope", "key\nvalue" records (a key alone
// for a valueless boolean). Should git fail, the files are read as usual.
func (r *Repo) gitConfig() []configEntry {
	// Without the containment settings (contain.go), which would show as
	// the command line's: listing the config runs no program.
	out, err := runUncontained(context.Background(), r.Dir(), "config", "--list", "--show-scope", "-z")
	if err != nil {
		return loadConfigs(r)
	}
	var entries []configEntry
	recs := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		k, v, ok := strings.Cut(recs[i+1], "\n")
		if !ok {
			v = "true"
		}
		entries = append(entries, configEntry{Key: normalKey(k), Value: v, Scope: gitScope(recs[i])})
	}
	return entries
}

// configBool reads a boolean the way git does: true, yes, on or a
// non-zero number; a bare key is true.
func configBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	case "", "false", "no", "off", "0":
		return false
	}
	n := 0
	_, err := fmt.Sscan(v, &n)
	return err == nil && n != 0
}
