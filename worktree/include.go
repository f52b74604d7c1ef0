package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/liza-dev/git-liza/refstore"
)

// IncludeFile names, in gitignore syntax, the ignored files and folders of
// the main checkout that are copied into each new worktree (the
// convention Claude Code reads for its own worktrees): the .env and local
// settings a fresh checkout lacks.
//
// Both the file and the main checkout are partly written by agents (the
// planner works in the main checkout), so the copy trusts neither far:
//   - the list is read from the Source commit (the integration tip), never
//     from the main checkout's file or the commit checked out, which a
//     coder wrote;
//   - only files git ignores in the main checkout are copied, never one it
//     tracks, never one the new worktree already has;
//   - nothing out of the repository: a pattern with a ".." step is
//     refused, a symbolic link is copied only as a link whose target stays
//     inside, and the files are read and written through os.Root, which
//     does not follow a link out of the main checkout or the worktree;
//   - nothing of git's or git-liza's own (.git, .worktrees, .liza);
//   - a count and a size cap, past which the rest is skipped.
const IncludeFile = ".worktreeinclude"

// The caps on one worktree's copy, and on the list itself.
var (
	maxIncludeFiles       = 20000
	maxIncludeBytes int64 = 1 << 30
	maxIncludeList  int64 = 64 << 10
	maxPatterns           = 1000
	// maxLogNames is how many names, and skip lines, a log line tells.
	maxLogNames = 50
)

// ownDirs are the top-level folders that are never copied.
var ownDirs = []string{".git", Dir, ".liza"}

// copyIncluded copies into p.Dir what the .worktreeinclude of p.Source
// names, and records it in out. Refusals and skips are recorded, and
// told to p.Log; only a failure to list the main checkout is an error.
func copyIncluded(ctx context.Context, repo *refstore.Repo, p Prep, out *Prepared) error {
	root := repo.MainWorkTree()
	if root == "" || p.Source.IsZero() {
		return nil
	}
	list, err := includeList(repo, p.Source)
	if err != nil || list == nil {
		return err
	}
	patterns := includePatterns(list, out)
	skips := len(out.Skipped)
	if len(patterns) > 0 {
		names, tracked, err := includedFiles(ctx, root, patterns)
		if err != nil {
			return err
		}
		for _, name := range tracked {
			out.Skipped = append(out.Skipped, printable(name)+": skipped: git tracks it")
		}
		if err := copyFiles(ctx, root, p.Dir, names, out); err != nil {
			return err
		}
	}
	if p.Log != nil {
		logPrepared(p, out, skips)
	}
	return nil
}

// includeList is the .worktreeinclude at the top of commit's tree; nil
// when there is none (or it is not a regular file).
func includeList(repo *refstore.Repo, commit refstore.Hash) ([]byte, error) {
	c, err := repo.ReadCommit(commit)
	if err != nil {
		return nil, err
	}
	entries, err := repo.ReadTree(c.Tree)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name == IncludeFile && (e.Mode == "100644" || e.Mode == "100755") {
			b, err := repo.ReadBlobMax(e.ID, maxIncludeList)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", IncludeFile, err)
			}
			return b, nil
		}
	}
	return nil, nil
}

// includePatterns is the list's patterns that may be used, each as
// written; every line refused is recorded in out.
func includePatterns(list []byte, out *Prepared) []string {
	var patterns []string
	refuse := func(line, why string) {
		out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %q refused: %s", IncludeFile, line, why))
	}
	for raw := range bytes.SplitSeq(list, []byte("\n")) {
		line := strings.TrimSuffix(string(raw), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0x9b }) {
			refuse(line, "it holds control characters")
			continue
		}
		// The path the pattern names, its negation and anchoring aside;
		// a backslash escapes in gitignore syntax and is no separator.
		body := strings.TrimPrefix(strings.TrimPrefix(line, `\`), "!")
		steps := strings.Split(strings.Trim(body, "/"), "/")
		switch {
		case slices.Contains(steps, ".."):
			refuse(line, "it leaves the repository")
		case slices.Contains(ownDirs, steps[0]) || slices.Contains(steps, ".git"):
			refuse(line, "git-liza's own folders are never copied")
		case len(patterns) == maxPatterns:
			refuse(line, fmt.Sprintf("past the cap of %d patterns", maxPatterns))
		default:
			patterns = append(patterns, line)
		}
	}
	return patterns
}

// includedFiles lists the files of the main checkout at root that the
// patterns name and that git ignores there (and so does not track),
// sorted, and those it names that git tracks. git lists them: the
// patterns' syntax is git's own.
func includedFiles(ctx context.Context, root string, patterns []string) (names, tracked []string, err error) {
	args := []string{"ls-files", "-z", "--others", "--ignored"}
	for _, p := range patterns {
		args = append(args, "--exclude="+p)
	}
	named, err := refstore.RunIn(ctx, root, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list the files %s names: %w", IncludeFile, err)
	}
	// What git tracks is named too, to be refused: a pattern that names
	// a tracked file is a mistake its author should hear of.
	targs := slices.Clone(args)
	targs[2] = "--cached"
	trackedOut, err := refstore.RunIn(ctx, root, targs...)
	if err != nil {
		return nil, nil, fmt.Errorf("list the files %s names: %w", IncludeFile, err)
	}
	ignored, err := refstore.RunIn(ctx, root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard")
	if err != nil {
		return nil, nil, fmt.Errorf("list the ignored files: %w", err)
	}
	isIgnored := map[string]bool{}
	for name := range strings.SplitSeq(string(ignored), "\x00") {
		isIgnored[name] = true
	}
	for name := range strings.SplitSeq(string(trackedOut), "\x00") {
		if name != "" {
			tracked = append(tracked, name)
		}
	}
	for name := range strings.SplitSeq(string(named), "\x00") {
		// A name ending in a slash is a repository of its own (another
		// worktree, a clone) that git does not list into.
		if name == "" || strings.HasSuffix(name, "/") || !isIgnored[name] || ownPath(name) {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, tracked, nil
}

// ownPath reports whether name lies in git's or git-liza's own folders.
func ownPath(name string) bool {
	steps := strings.Split(name, "/")
	return slices.Contains(ownDirs, steps[0]) || slices.Contains(steps, ".git")
}

// copyFiles copies names from the main checkout at root into the worktree
// at dir, within the caps.
func copyFiles(ctx context.Context, root, dir string, names []string, out *Prepared) error {
	from, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer to.Close()
	skip := func(name, why string) { out.Skipped = append(out.Skipped, printable(name)+": skipped: "+why) }
	for i, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(out.Copied) == maxIncludeFiles {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%d more skipped: past the cap of %d files", len(names)-i, maxIncludeFiles))
			break
		}
		fi, err := from.Lstat(name)
		if err != nil {
			skip(name, "gone from the main checkout")
			continue
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if why := copyLink(from, to, name); why != "" {
				skip(name, why)
				continue
			}
		case fi.Mode().IsRegular():
			if out.Bytes+fi.Size() > maxIncludeBytes {
				out.Skipped = append(out.Skipped, fmt.Sprintf("%d more skipped: past the cap of %d bytes", len(names)-i, maxIncludeBytes))
				return nil
			}
			n, why := copyFile(from, to, name, fi, maxIncludeBytes-out.Bytes)
			out.Bytes += n
			if why != "" {
				skip(name, why)
				continue
			}
		default:
			skip(name, "not a regular file")
			continue
		}
		out.Copied = append(out.Copied, name)
	}
	return nil
}

// copyLink copies the symbolic link name as a link, when its target stays
// in the repository; it returns why not otherwise.
func copyLink(from, to *os.Root, name string) string {
	target, err := from.Readlink(name)
	if err != nil {
		return "gone from the main checkout"
	}
	resolved := path.Join(path.Dir(name), target)
	if path.IsAbs(target) || resolved == ".." || strings.HasPrefix(resolved, "../") {
		return "a symbolic link out of the repository"
	}
	if ownPath(resolved) {
		return "a symbolic link into git-liza's own folders"
	}
	if err := mkParent(to, name); err != nil {
		return placeErr(err)
	}
	if err := to.Symlink(target, name); err != nil {
		return placeErr(err)
	}
	return ""
}

// copyFile copies the regular file name, which fi describes, reading at
// most limit bytes (a file that grew past the cap meanwhile is not copied
// whole, and not kept). It returns the bytes written, and why the copy
// failed.
func copyFile(from, to *os.Root, name string, fi fs.FileInfo, limit int64) (int64, string) {
	src, err := from.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return 0, "cannot be read: " + errText(err)
	}
	defer src.Close()
	if now, err := src.Stat(); err != nil || !now.Mode().IsRegular() {
		return 0, "not a regular file"
	} else if !os.SameFile(now, fi) {
		// Put in place of the file listed (a link followed inside the
		// checkout, to .git/config say) since it was looked at.
		return 0, "changed while it was copied"
	}
	if err := mkParent(to, name); err != nil {
		return 0, placeErr(err)
	}
	dst, err := to.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return 0, placeErr(err)
	}
	n, err := io.Copy(dst, io.LimitReader(src, limit+1))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("it grew past the cap of %d bytes", maxIncludeBytes)
	}
	if err != nil {
		to.Remove(name)
		return 0, "not copied: " + errText(err)
	}
	return n, ""
}

// mkParent makes the folders of name in the worktree.
func mkParent(to *os.Root, name string) error {
	if d := path.Dir(name); d != "." {
		return to.MkdirAll(d, 0o755)
	}
	return nil
}

// placeErr says why a copy could not be put in the worktree.
func placeErr(err error) string {
	if errors.Is(err, fs.ErrExist) {
		return "the worktree has it already"
	}
	return "cannot be put in the worktree: " + errText(err)
}

// errText is err without the paths os puts in it.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// logPrepared tells p.Log what was copied and what was refused (the list
// itself from line skips on), a bounded number of names each.
func logPrepared(p Prep, out *Prepared, skips int) {
	for i, line := range out.Skipped {
		if i == maxLogNames {
			p.Log(fmt.Sprintf("%s: and %d more lines skipped", p.Dir, len(out.Skipped)-i))
			break
		}
		if i < skips {
			p.Log(line)
		} else {
			p.Log(fmt.Sprintf("%s: %s", p.Dir, line))
		}
	}
	if len(out.Copied) == 0 {
		return
	}
	var names []string
	for _, name := range out.Copied[:min(len(out.Copied), maxLogNames)] {
		names = append(names, printable(name))
	}
	more := ""
	if len(out.Copied) > maxLogNames {
		more = fmt.Sprintf(" and %d more", len(out.Copied)-maxLogNames)
	}
	files := "files"
	if len(out.Copied) == 1 {
		files = "file"
	}
	p.Log(fmt.Sprintf("%s: copied %d ignored %s (%d bytes) from the main checkout, as %s asks: %s%s",
		p.Dir, len(out.Copied), files, out.Bytes, IncludeFile, strings.Join(names, ", "), more))
}

// printable is name as a log line may hold it: quoted, escapes and all,
// when it holds a control character or a comma (the lists' separator).
func printable(name string) string {
	if strings.ContainsFunc(name, func(r rune) bool {
		return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == ',' || r == utf8.RuneError
	}) {
		return strconv.Quote(name)
	}
	return name
}
