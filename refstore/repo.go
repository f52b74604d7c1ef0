package refstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/liza-dev/git-liza/contracts"
)

// Repo is an opened repository: where its directories are and its object
// storage. It works the same from the main checkout, from a linked worktree
// and in a bare repository.
type Repo struct {
	// GitDir is this checkout's git directory (.git, or
	// .git/worktrees/NAME in a linked worktree, or the bare repository).
	GitDir string
	// CommonDir holds what all worktrees share: objects and refs.
	CommonDir string
	// WorkTree is the top of the current checkout; empty in a bare repository.
	WorkTree string
	// Notice, when set, is told what git-liza repaired on the way (a stale
	// lock of git's it removed), one line at a time.
	Notice func(string)

	odb *odb
	// algo is the object format; plumbing says why the repository is read
	// through git's plumbing (see usePlumbing), empty when it is not.
	algo     hashAlgo
	plumbing string

	configOnce sync.Once
	config     []configEntry
}

// ErrNotRepo is returned by Open outside any git repository.
var ErrNotRepo = contracts.Invalidf("not a git repository (or any of the parent directories)")

// Open finds the repository that contains dir, honouring GIT_DIR,
// GIT_WORK_TREE and GIT_COMMON_DIR as git does. It does not use
// git.PlainOpen, which refuses extensions.worktreeConfig and does not see the
// common dir of a linked worktree.
func Open(dir string) (*Repo, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r := &Repo{}
	if gd := os.Getenv("GIT_DIR"); gd != "" {
		r.GitDir = absFrom(dir, gd)
		if !isGitDir(r.GitDir) {
			return nil, contracts.Invalidf("GIT_DIR=%s is not a git directory", gd)
		}
		if wt := os.Getenv("GIT_WORK_TREE"); wt != "" {
			r.WorkTree = absFrom(dir, wt)
		} else if !isBare(r.GitDir) {
			r.WorkTree = dir
		}
	} else if err := r.discover(dir); err != nil {
		return nil, err
	}
	r.CommonDir = r.GitDir
	if cd := os.Getenv("GIT_COMMON_DIR"); cd != "" {
		r.CommonDir = absFrom(dir, cd)
	} else if b, err := ReadFile(filepath.Join(r.GitDir, "commondir")); err == nil {
		r.CommonDir = absFrom(r.GitDir, strings.TrimSpace(string(b)))
	}
	r.CommonDir = filepath.Clean(r.CommonDir)
	registerContainment(r)
	checkGitCached(r.CommonDir)
	format := readFormat(r.CommonDir)
	r.openObjects(format.algo, r.promisor)
	r.odb.fill = r.fillPartialClone
	why := format.foreign
	if why == "" {
		if v, ok := r.Config(PlumbingKey); ok && configBool(v) {
			why = PlumbingKey + " is set"
		}
	}
	if why != "" {
		if err := r.usePlumbing(why); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// openObjects sets up the object storage of r, in CommonDir, of object
// format algo: promisor says whether the repository is a partial clone.
// The cat-file process it may start ends when r is garbage collected.
func (r *Repo) openObjects(algo hashAlgo, promisor func() bool) {
	r.algo = algo
	r.odb = newODB(filepath.Join(r.CommonDir, "objects"), algo)
	r.odb.levelOf = r.looseCompression
	r.odb.tidyLock = filepath.Join(r.CommonDir, "liza", "packs.lock")
	r.odb.promisorOf = promisor
	r.odb.git = &gitObjects{dir: r.Dir()}
	runtime.AddCleanup(r, (*gitObjects).close, r.odb.git)
}

// discover walks up from dir looking for .git (a directory, or a file that
// points at one) or for a bare repository.
func (r *Repo) discover(dir string) error {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			if fi.IsDir() && isGitDir(dotgit) {
				r.GitDir, r.WorkTree = dotgit, d
				return nil
			}
			if !fi.IsDir() {
				gd, err := readGitFile(dotgit)
				if err != nil {
					return err
				}
				r.GitDir, r.WorkTree = gd, d
				return nil
			}
		}
		if isGitDir(d) {
			r.GitDir = d
			return nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ErrNotRepo
		}
		d = parent
	}
}

// CheckoutGitDir is the git directory of the checkout whose top is dir:
// dir/.git, or the one a linked worktree's .git file names, read as git
// reads them, without a git process.
func CheckoutGitDir(dir string) (string, error) {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Stat(dotgit)
	switch {
	case err != nil:
		return "", err
	case !fi.IsDir():
		return readGitFile(dotgit)
	case !isGitDir(dotgit):
		return "", contracts.Invalidf("%s is not a git directory", dotgit)
	}
	return dotgit, nil
}

// readGitFile reads a "gitdir: PATH" file, as a linked worktree or a
// submodule has in place of a .git directory.
func readGitFile(path string) (string, error) {
	b, err := ReadFile(path)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(string(b))
	rest, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", contracts.Invalidf("%s: not a gitdir file", path)
	}
	gd := absFrom(filepath.Dir(path), strings.TrimSpace(rest))
	if !isGitDir(gd) {
		return "", contracts.Invalidf("%s points at %s, which is not a git directory", path, gd)
	}
	return gd, nil
}

func isGitDir(d string) bool {
	if fi, err := os.Stat(filepath.Join(d, "HEAD")); err != nil || fi.IsDir() {
		return false
	}
	if _, err := os.Stat(filepath.Join(d, "commondir")); err == nil {
		return true
	}
	fi, err := os.Stat(filepath.Join(d, "objects"))
	return err == nil && fi.IsDir()
}

// isBare reports whether gitDir is a bare repository by its config.
func isBare(gitDir string) bool {
	b, err := ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "bare") {
			return strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	return false
}

func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// Bare reports whether the repository has no work tree here.
func (r *Repo) Bare() bool { return r.WorkTree == "" }

// MainWorkTree is the top of the repository's main checkout, where
// .worktrees/ lives; empty for a bare repository.
func (r *Repo) MainWorkTree() string {
	if filepath.Base(r.CommonDir) == ".git" {
		return filepath.Dir(r.CommonDir)
	}
	if r.GitDir == r.CommonDir {
		return r.WorkTree
	}
	return ""
}

// Dir is where git commands for this repository run.
func (r *Repo) Dir() string {
	if r.WorkTree != "" {
		return r.WorkTree
	}
	return r.GitDir
}

// Git runs a git command in this repository.
func (r *Repo) Git(ctx context.Context, args ...string) ([]byte, error) {
	return Run(ctx, r.Dir(), nil, args...)
}

// GitInput runs a git command in this repository with stdin.
func (r *Repo) GitInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return Run(ctx, r.Dir(), stdin, args...)
}

// ReadRef returns the object a ref points at, and whether the ref exists.
// Symbolic refs are followed. It reads the ref files and packed-refs as
// git's files backend lays them out; a repository read through git's
// plumbing (another ref storage, an unknown extension) is asked through
// git (showRef).
func (r *Repo) ReadRef(name string) (Hash, bool, error) {
	if !validRefPath(name) {
		return Hash{}, false, fmt.Errorf("reading %s: not a ref name", name)
	}
	if r.plumbing != "" {
		return r.showRef(name)
	}
	for range 5 {
		target, h, ok, err := r.readRefOnce(name)
		if err != nil || !ok || target == "" {
			return h, ok, err
		}
		if !validRefPath(target) {
			return Hash{}, false, fmt.Errorf("reading %s: points at %q", name, target)
		}
		name = target
	}
	return Hash{}, false, fmt.Errorf("reading %s: too many symbolic refs", name)
}

// readRefOnce reads one ref: its value, or the target of a symbolic ref.
func (r *Repo) readRefOnce(name string) (target string, h Hash, ok bool, err error) {
	dir := r.CommonDir
	if name == "HEAD" || strings.HasPrefix(name, "refs/worktree/") || strings.HasPrefix(name, "refs/bisect/") || strings.HasPrefix(name, "refs/rewritten/") {
		dir = r.GitDir
	}
	b, err := ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		line := strings.TrimSpace(string(b))
		if t, ok := strings.CutPrefix(line, "ref:"); ok {
			return strings.TrimSpace(t), Hash{}, true, nil
		}
		if h, ok := ParseHash(line); ok {
			return "", h, true, nil
		}
		return "", Hash{}, false, fmt.Errorf("reading %s: %q is not an object id", name, line)
	case errors.Is(err, fs.ErrNotExist), isDirErr(err):
	default:
		return "", Hash{}, false, fmt.Errorf("reading %s: %w", name, err)
	}
	h, ok, err = r.packedRef(name)
	return "", h, ok, err
}

// RefFiles is where the files ref backend keeps one ref: its loose file
// and its packed-refs entry, each possibly absent.
type RefFiles struct {
	Loose, Packed       Hash
	HasLoose, HasPacked bool
	// PackedLocked says packed-refs.lock exists: a transaction that
	// rewrites packed-refs (a deletion, a pack-refs) holds it.
	PackedLocked bool
}

// ReadRefFiles reads both copies of a ref that is not symbolic. ok is false
// when the repository keeps its refs in another backend
// (extensions.refStorage).
func (r *Repo) ReadRefFiles(name string) (f RefFiles, ok bool, err error) {
	if !validRefPath(name) {
		return f, false, fmt.Errorf("reading %s: not a ref name", name)
	}
	if v, set := r.Config("extensions.refstorage"); set && !strings.EqualFold(v, "files") {
		return f, false, nil
	}
	b, err := ReadFile(filepath.Join(r.CommonDir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		f.Loose, f.HasLoose = ParseHash(strings.TrimSpace(string(b)))
	case !errors.Is(err, fs.ErrNotExist) && !isDirErr(err):
		return f, false, fmt.Errorf("reading %s: %w", name, err)
	}
	if f.Packed, f.HasPacked, err = r.packedRef(name); err != nil {
		return f, false, err
	}
	f.PackedLocked = exists(filepath.Join(r.CommonDir, "packed-refs.lock"))
	return f, true, nil
}

// LooseRef reads the loose file of a ref that is not symbolic, and nothing
// else: a few system calls, for a caller that watches a ref move. ok is
// false when there is none (the ref is packed, symbolic, or kept by
// another ref storage); ReadRef then says where the ref is.
func (r *Repo) LooseRef(name string) (Hash, bool) {
	if r.plumbing != "" || !validRefPath(name) {
		return Hash{}, false
	}
	b, err := ReadFile(filepath.Join(r.CommonDir, filepath.FromSlash(name)))
	if err != nil {
		return Hash{}, false
	}
	return ParseHash(strings.TrimSpace(string(b)))
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// packedRef looks name up in packed-refs: "<id> <name>" lines, each
// possibly followed by a "^<id>" line with what a tag peels to.
func (r *Repo) packedRef(name string) (Hash, bool, error) {
	b, err := ReadFile(filepath.Join(r.CommonDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return Hash{}, false, nil
	}
	if err != nil {
		return Hash{}, false, fmt.Errorf("reading packed-refs: %w", err)
	}
	needle := []byte(" " + name + "\n")
	for from := 0; ; {
		i := bytes.Index(b[from:], needle)
		if i < 0 {
			return Hash{}, false, nil
		}
		i += from
		from = i + len(needle)
		if start := i - 2*r.algo.size(); start == 0 || start > 0 && b[start-1] == '\n' {
			if h, ok := ParseHash(string(b[start:i])); ok {
				return h, true, nil
			}
		}
	}
}

// showRef reads a ref through git. HEAD is asked of rev-parse; any other
// name of for-each-ref, which takes it as the exact name it is (rev-parse
// would also try refs/<name>, refs/tags/<name>...), follows a symbolic ref
// and prints nothing for a ref that does not exist. A pattern also matches
// the refs below it: only the line with the name counts.
func (r *Repo) showRef(name string) (Hash, bool, error) {
	ctx := context.Background()
	if name == "HEAD" {
		out, err := r.Git(ctx, "rev-parse", "--verify", "--quiet", "HEAD")
		var ge *GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return Hash{}, false, nil // an unborn branch
		}
		if err != nil {
			return Hash{}, false, err
		}
		return r.gitSaid(name, "rev-parse", strings.TrimSpace(string(out)))
	}
	out, err := r.Git(ctx, "for-each-ref", "--format=%(objectname) %(refname)", name)
	if err != nil {
		return Hash{}, false, err
	}
	for _, line := range strings.Split(string(out), "\n") {
		if id, ref, _ := strings.Cut(line, " "); ref == name {
			return r.gitSaid(name, "for-each-ref", id)
		}
	}
	return Hash{}, false, nil
}

// gitSaid reads the id git printed for ref.
func (r *Repo) gitSaid(ref, cmd, id string) (Hash, bool, error) {
	h, ok := ParseHash(id)
	if !ok {
		return Hash{}, false, fmt.Errorf("reading %s: git %s printed %q", ref, cmd, id)
	}
	return h, true, nil
}

// validRefPath accepts the ref names git-liza reads: HEAD or refs/...,
// with no component that could leave the git directory.
func validRefPath(name string) bool {
	if name != "HEAD" && !strings.HasPrefix(name, "refs/") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "\\\x00") {
			return false
		}
	}
	return true
}

func isDirErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(pe.Err, syscall.EISDIR)
}

// Head returns what HEAD of this checkout points at: the branch ref name
// (empty when detached) and the commit (zero on an unborn branch).
func (r *Repo) Head() (branch string, commit Hash, err error) {
	if r.plumbing != "" {
		return r.headThroughGit()
	}
	b, err := ReadFile(filepath.Join(r.GitDir, "HEAD"))
	if err != nil {
		return "", Hash{}, err
	}
	line := string(bytes.TrimSpace(b))
	if target, ok := strings.CutPrefix(line, "ref: "); ok {
		h, _, err := r.ReadRef(target)
		return target, h, err
	}
	h, ok := ParseHash(line)
	if !ok {
		return "", Hash{}, fmt.Errorf("HEAD holds %q", line)
	}
	return "", h, nil
}

// headThroughGit is Head asked of git: `git symbolic-ref` exits 1 when
// HEAD is detached.
func (r *Repo) headThroughGit() (string, Hash, error) {
	out, err := r.Git(context.Background(), "symbolic-ref", "--quiet", "HEAD")
	var ge *GitError
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode == 1) {
		return "", Hash{}, err
	}
	branch := strings.TrimSpace(string(out))
	h, _, err := r.ReadRef("HEAD")
	return branch, h, err
}

// Close ends the git process the repository may have started to read
// objects (when it is read through git's plumbing, or to fetch what a
// partial clone lacks). A Repo that is not closed ends it when the Repo is
// garbage collected, or when the program exits.
func (r *Repo) Close() error {
	r.odb.git.close()
	return nil
}
