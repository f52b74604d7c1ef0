package refstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
)

// fsck fails the test unless `git fsck --strict` finds nothing wrong.
func fsck(t *testing.T, dir string) {
	t.Helper()
	out, err := runGit(dir, nil, nil, "fsck", "--strict", "--no-dangling", "--no-progress")
	if err != nil || strings.Contains(out, "error") || strings.Contains(out, "warning") {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

func TestWriteBlobMatchesGit(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		for _, data := range []string{"", "hello\n", "no newline", "bin\x00ary\xff", strings.Repeat("long line of text\n", 2000)} {
			id, err := r.WriteBlob([]byte(data))
			if err != nil {
				t.Fatal(err)
			}
			if want := gitIn(t, dir, []byte(data), "hash-object", "--stdin"); id.String() != want {
				t.Errorf("WriteBlob(%.20q) = %s, git hash-object says %s", data, id, want)
			}
			// git reads back what we wrote, byte for byte.
			if got, err := runGit(dir, nil, nil, "cat-file", "blob", id.String()); err != nil || got != strings.TrimSpace(data) {
				t.Errorf("git cat-file blob %s = %.20q, %v", id, got, err)
			}
			if typ := git(t, dir, "cat-file", "-t", id.String()); typ != "blob" {
				t.Errorf("git cat-file -t = %s", typ)
			}
			back, err := r.ReadBlob(id)
			if err != nil || string(back) != data {
				t.Errorf("ReadBlob = %.20q, %v", back, err)
			}
			if !r.HasObject(id) {
				t.Errorf("HasObject(%s) = false after writing it", id)
			}
		}
		// Writing the same blob again is fine and gives the same id.
		a, _ := r.WriteBlob([]byte("hello\n"))
		b, err := r.WriteBlob([]byte("hello\n"))
		if err != nil || a != b {
			t.Fatalf("second write: %s, %v; first %s", b, err, a)
		}
		fsck(t, dir)
	})
}

func TestWriteTreeMatchesMktree(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		blob, _ := r.WriteBlob([]byte("x\n"))
		inner, err := r.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "f", ID: blob}})
		if err != nil {
			t.Fatal(err)
		}
		// A tree named "a" sorts as "a/": after "a-b" and "a.b", before "a0".
		entries := []TreeEntry{
			{Mode: ModeFile, Name: "a0", ID: blob},
			{Mode: ModeTree, Name: "a", ID: inner},
			{Mode: ModeFile, Name: "a.b", ID: blob},
			{Mode: ModeFile, Name: "a-b", ID: blob},
			{Mode: "040000", Name: "b", ID: inner}, // the zero-padded spelling is accepted
			{Mode: ModeFile, Name: "B", ID: blob},
		}
		mk := mktreeInput(entries)
		id, err := r.WriteTree(append([]TreeEntry(nil), entries...))
		if err != nil {
			t.Fatal(err)
		}
		if want := gitIn(t, dir, []byte(mk), "mktree"); id.String() != want {
			t.Fatalf("WriteTree = %s, git mktree says %s", id, want)
		}
		fsck(t, dir)

		// ReadTree gives git's order, which is what SortTree gives.
		got, err := r.ReadTree(id)
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, len(got))
		for i, e := range got {
			names[i] = e.Name
		}
		lsTree := strings.Split(git(t, dir, "ls-tree", "--name-only", id.String()), "\n")
		if !reflect.DeepEqual(names, lsTree) {
			t.Fatalf("ReadTree order %q, git ls-tree order %q", names, lsTree)
		}
		if want := []string{"B", "a-b", "a.b", "a", "a0", "b"}; !reflect.DeepEqual(names, want) {
			t.Fatalf("tree order %q, want %q", names, want)
		}
		sorted := append([]TreeEntry(nil), entries...)
		SortTree(sorted)
		for i := range sorted {
			if sorted[i].Name != names[i] {
				t.Fatalf("SortTree order differs from git at %d: %q vs %q", i, sorted[i].Name, names[i])
			}
		}
		// Modes come back as git stores them.
		for _, e := range got {
			if want := map[bool]string{true: "40000", false: "100644"}[e.Name == "a" || e.Name == "b"]; e.Mode != want {
				t.Errorf("%s: mode %s, want %s", e.Name, e.Mode, want)
			}
		}
	})
}

func TestSortTreeFileVersusTree(t *testing.T) {
	// A file "a" sorts before "a.b"; a tree "a" sorts after it.
	file := []TreeEntry{{Mode: ModeFile, Name: "a.b"}, {Mode: ModeFile, Name: "a"}}
	SortTree(file)
	if file[0].Name != "a" {
		t.Errorf("file a: order %s, %s", file[0].Name, file[1].Name)
	}
	tree := []TreeEntry{{Mode: ModeTree, Name: "a"}, {Mode: ModeFile, Name: "a.b"}}
	SortTree(tree)
	if tree[0].Name != "a.b" {
		t.Errorf("tree a: order %s, %s", tree[0].Name, tree[1].Name)
	}
}

func TestWriteCommitMatchesGit(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
		head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
		prev := hashOf(t, git(t, dir, "rev-parse", "HEAD~1"))
		tree := hashOf(t, git(t, dir, "rev-parse", "HEAD^{tree}"))
		when := time.Unix(1700000000, 0).In(time.FixedZone("", -(5*3600 + 30*60)))
		author := Signature{Name: "Coder One", Email: "coder-1@liza.invalid", When: when}
		msg := "claim task-3 (coder-1)\n\nLiza-Op: claim\nLiza-Agent: coder-1\n"

		for _, parents := range [][]Hash{nil, {head}, {head, prev}} {
			id, err := r.WriteCommit(tree, parents, author, msg)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"commit-tree", tree.String()}
			for _, p := range parents {
				args = append(args, "-p", p.String())
			}
			want, err := runGit(dir, []byte(msg), []string{
				"GIT_AUTHOR_NAME=Coder One", "GIT_AUTHOR_EMAIL=coder-1@liza.invalid", "GIT_AUTHOR_DATE=1700000000 -0530",
				"GIT_COMMITTER_NAME=Coder One", "GIT_COMMITTER_EMAIL=coder-1@liza.invalid", "GIT_COMMITTER_DATE=1700000000 -0530",
			}, args...)
			if err != nil {
				t.Fatal(err)
			}
			if id.String() != want {
				t.Errorf("%d parents: WriteCommit = %s, git commit-tree says %s\n%s", len(parents), id, want, git(t, dir, "cat-file", "-p", id.String()))
			}

			// git parses it.
			body := git(t, dir, "cat-file", "-p", id.String())
			if !strings.Contains(body, "\nauthor Coder One <coder-1@liza.invalid> 1700000000 -0530\n") {
				t.Errorf("author line missing:\n%s", body)
			}
			var wantParents []string
			for _, p := range parents {
				wantParents = append(wantParents, p.String())
			}
			if got := git(t, dir, "log", "-1", "--format=%P", id.String()); got != strings.Join(wantParents, " ") {
				t.Errorf("parents %q", got)
			}
			if got := git(t, dir, "log", "-1", "--format=%B", id.String()); got != strings.TrimSpace(msg) {
				t.Errorf("message %q", got)
			}

			// And so do we.
			c, err := r.ReadCommit(id)
			if err != nil {
				t.Fatal(err)
			}
			if c.ID != id || c.Tree != tree || (len(c.Parents) != 0 || len(parents) != 0) && !reflect.DeepEqual(c.Parents, parents) || c.Message != msg {
				t.Errorf("ReadCommit = %+v", c)
			}
			if c.Author.Name != "Coder One" || c.Author.Email != "coder-1@liza.invalid" || !c.Author.When.Equal(when) {
				t.Errorf("author %+v", c.Author)
			}
			if _, off := c.Author.When.Zone(); off != -(5*3600 + 30*60) {
				t.Errorf("author offset %d", off)
			}
			if c.Committer.Name != c.Author.Name || c.Committer.Email != c.Author.Email || !c.Committer.When.Equal(c.Author.When) {
				t.Errorf("committer %+v, author %+v", c.Committer, c.Author)
			}
		}

		// A message without a final newline gets one; odd names are cleaned.
		id, err := r.WriteCommit(tree, []Hash{head}, Signature{Name: "Bad <Name>\n", Email: "e<@>x", When: time.Unix(1, 0).UTC()}, "subject")
		if err != nil {
			t.Fatal(err)
		}
		if got := git(t, dir, "log", "-1", "--format=%an|%ae|%B", id.String()); got != "Bad Name|e@x|subject" {
			t.Errorf("cleaned commit reads %q", got)
		}
		fsck(t, dir)
	})
}

func TestReadWhatGitWrote(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		writeFile(t, filepath.Join(dir, "dir", "more.txt"), "more\n")
		git(t, dir, "add", ".")
		if _, err := runGit(dir, nil, []string{"GIT_AUTHOR_DATE=1600000000 +0200", "GIT_COMMITTER_DATE=1600000100 -0100"},
			"commit", "-q", "-m", "second", "-m", "Body line.\n\nKey: value"); err != nil {
			t.Fatal(err)
		}

		check := func(r *Repo) {
			t.Helper()
			head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
			c, err := r.ReadCommit(head)
			if err != nil {
				t.Fatal(err)
			}
			if c.Tree.String() != git(t, dir, "rev-parse", "HEAD^{tree}") {
				t.Errorf("tree %s", c.Tree)
			}
			if len(c.Parents) != 1 || c.Parents[0].String() != git(t, dir, "rev-parse", "HEAD~1") {
				t.Errorf("parents %v", c.Parents)
			}
			if c.Author.Name != "Ada Operator" || c.Author.Email != "ada@example.com" || c.Author.When.Unix() != 1600000000 {
				t.Errorf("author %+v", c.Author)
			}
			if _, off := c.Committer.When.Zone(); c.Committer.When.Unix() != 1600000100 || off != -3600 {
				t.Errorf("committer %+v", c.Committer)
			}
			if c.Message != "second\n\nBody line.\n\nKey: value\n" {
				t.Errorf("message %q", c.Message)
			}

			entries, err := r.ReadTree(c.Tree)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, e := range entries {
				typ := "blob"
				if e.IsTree() {
					typ = "tree"
				}
				mode := e.Mode
				if e.IsTree() {
					mode = "040000"
				}
				lines = append(lines, fmt.Sprintf("%s %s %s\t%s", mode, typ, e.ID, e.Name))
			}
			if got, want := strings.Join(lines, "\n"), git(t, dir, "ls-tree", c.Tree.String()); got != want {
				t.Errorf("ReadTree:\n%s\ngit ls-tree:\n%s", got, want)
			}
			blob := hashOf(t, git(t, dir, "rev-parse", "HEAD:dir/more.txt"))
			if b, err := r.ReadBlob(blob); err != nil || string(b) != "more\n" {
				t.Errorf("ReadBlob = %q, %v", b, err)
			}
			// The wrong type is an error, not a misread.
			if _, err := r.ReadTree(blob); err == nil {
				t.Error("ReadTree of a blob succeeded")
			}
			if _, err := r.ReadCommit(c.Tree); err == nil {
				t.Error("ReadCommit of a tree succeeded")
			}
		}
		check(open(t, dir))
		// The same from a pack, after gc.
		git(t, dir, "gc", "-q")
		if matches, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(matches) == 0 {
			t.Fatal("gc made no pack")
		}
		check(open(t, dir))
	})
}

func TestWriteIntoPackedRepo(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		git(t, dir, "gc", "-q")
		r := open(t, dir)
		head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
		c, err := r.ReadCommit(head)
		if err != nil {
			t.Fatal(err)
		}
		id, err := r.WriteCommit(c.Tree, []Hash{head}, Signature{Name: "n", Email: "e", When: time.Unix(1700000000, 0).UTC()}, "next\n")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.ReadCommit(id); err != nil || got.Parents[0] != head {
			t.Fatalf("ReadCommit of a fresh loose commit: %+v, %v", got, err)
		}
		fsck(t, dir)
	})
}

func TestWriteObjectLeavesNoTempFiles(t *testing.T) {
	eachMode(t, fileModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		id, err := r.WriteBlob([]byte("tmp check\n"))
		if err != nil {
			t.Fatal(err)
		}
		hex := id.String()
		ents, err := os.ReadDir(filepath.Join(dir, ".git", "objects", hex[:2]))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "tmp_obj_") {
				t.Errorf("temporary file %s left behind", e.Name())
			}
		}
		fi, err := os.Stat(filepath.Join(dir, ".git", "objects", hex[:2], hex[2:]))
		if err != nil || fi.Mode().Perm()&0o222 != 0 {
			t.Errorf("loose object %v, mode %v; want read-only", err, fi.Mode())
		}
	})
}

func TestFileAt(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		head := hashOf(t, git(t, dir, "rev-parse", "HEAD"))
		for path, want := range map[string]bool{
			"README":            true,
			"dir":               true,
			"dir/":              true,
			"dir/file.txt":      true,
			"/dir/file.txt":     true,
			"dir/nope":          false,
			"nope":              false,
			"README/x":          false, // a file is not a directory
			"dir/file.txt/more": false,
			"Dir/file.txt":      false, // names are case-sensitive
		} {
			got, err := r.FileAt(head, path)
			if err != nil || got != want {
				t.Errorf("FileAt(%q) = %v, %v; want %v", path, got, err, want)
			}
		}
		tree := hashOf(t, git(t, dir, "rev-parse", "HEAD^{tree}"))
		if _, err := r.FileAt(tree, "README"); err == nil {
			t.Error("FileAt with a tree id instead of a commit succeeded")
		}
	})
}

func TestResolveCommit(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
		git(t, dir, "tag", "-a", "-m", "annotated", "v1")
		r := open(t, dir)
		ctx := context.Background()
		for _, rev := range []string{"HEAD", "main", "HEAD~1", "v1", git(t, dir, "rev-parse", "--short", "HEAD")} {
			got, err := r.ResolveCommit(ctx, rev)
			if err != nil {
				t.Errorf("ResolveCommit(%q): %v", rev, err)
				continue
			}
			if want := git(t, dir, "rev-parse", rev+"^{commit}"); got.String() != want {
				t.Errorf("ResolveCommit(%q) = %s, want %s", rev, got, want)
			}
		}
		for _, rev := range []string{"nope", "HEAD~5", "HEAD^{tree}", "--all", "-h", git(t, dir, "rev-parse", "HEAD:README")} {
			_, err := r.ResolveCommit(ctx, rev)
			wantCode(t, err, contracts.CodeInvalid)
		}
	})
}

// EditTree and FindEntry agree with git's own tree order: every edited
// list is what git mktree makes of the same entries, and every name is
// found.
func TestEditTreeMatchesMktree(t *testing.T) {
	eachMode(t, allModes, func(t *testing.T) {
		dir := newRepo(t)
		r := open(t, dir)
		blob, err := r.WriteBlob([]byte("x\n"))
		if err != nil {
			t.Fatal(err)
		}
		sub, err := r.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "f", ID: blob}})
		if err != nil {
			t.Fatal(err)
		}
		entry := func(name string, tree bool) TreeEntry {
			if tree {
				return TreeEntry{Mode: ModeTree, Name: name, ID: sub}
			}
			return TreeEntry{Mode: ModeFile, Name: name, ID: blob}
		}
		names := []string{"a", "a-b", "a.b", "a0", "ab", "b", "task-1.yaml", "task-10.yaml", "task-2.yaml", "z"}
		var list []TreeEntry
		for i, n := range names {
			list = append(list, entry(n, i%3 == 0))
		}
		SortTree(list)
		steps := [][]TreeEntry{
			{entry("a-c", false), {Name: "b"}},                      // add and delete
			{entry("a", false), entry("ab", true)},                  // a tree becomes a file, a file a tree
			{{Name: "no-such"}, entry("task-3.yaml", false)},        // deleting nothing
			{entry("a", true), {Name: "a-b"}, {Name: "a.b"}},        // and back
			{{Name: "z"}, {Name: "task-1.yaml"}, entry("0", false)}, // first and last
			{entry("a-b", true), entry("a-b", true), {Name: "a-c"}}, // the same edit twice
		}
		for n, edits := range steps {
			list = EditTree(list, edits)
			mk := mktreeInput(list)
			want := gitIn(t, dir, []byte(mk), "mktree")
			got, err := r.WriteTree(slices.Clone(list))
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want {
				t.Fatalf("step %d: EditTree order differs from git mktree:\n%s", n, mk)
			}
			if !slices.IsSortedFunc(list, compareEntries) {
				t.Fatalf("step %d: not sorted", n)
			}
			seen := map[string]bool{}
			for _, e := range list {
				if seen[e.Name] {
					t.Fatalf("step %d: %s twice", n, e.Name)
				}
				seen[e.Name] = true
				if f, ok := FindEntry(list, e.Name); !ok || f != e {
					t.Fatalf("step %d: FindEntry(%s) = %+v, %v", n, e.Name, f, ok)
				}
			}
			if _, ok := FindEntry(list, "no-such"); ok {
				t.Fatal("found a missing name")
			}
		}
	})
}

// mktreeInput is entries as git mktree reads them (and git ls-tree prints
// them).
func mktreeInput(entries []TreeEntry) string {
	var b strings.Builder
	for _, e := range entries {
		typ := "blob"
		if e.IsTree() {
			typ = "tree"
		}
		fmt.Fprintf(&b, "%s %s %s\t%s\n", e.Mode, typ, e.ID, e.Name)
	}
	return b.String()
}

// signatureFormat is a signature line as encode must write it: the
// identity cleaned of what would end it, the time in seconds and the
// zone as +hhmm.
func signatureFormat(s Signature) string {
	_, off := s.When.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	clean := strings.NewReplacer("<", "", ">", "", "\n", " ", "\x00", "")
	return fmt.Sprintf("%s <%s> %d %c%02d%02d", clean.Replace(s.Name), clean.Replace(s.Email), s.When.Unix(), sign, off/3600, off%3600/60)
}

func TestSignatureEncodeMatchesFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 28))
	pieces := []string{"", "a", "Ada Lovelace", "<", ">", "\n", "\x00", " ", "é", "coder-1@liza.invalid", "<x@y>", "\xff"}
	zones := []*time.Location{time.UTC, time.FixedZone("", -7*3600-30*60), time.FixedZone("", 5*3600+45*60), time.FixedZone("", 14*3600), time.FixedZone("", -59), time.FixedZone("", 120*3600)}
	for i := range 2000 {
		var name, email strings.Builder
		for range rng.IntN(5) {
			name.WriteString(pieces[rng.IntN(len(pieces))])
			email.WriteString(pieces[rng.IntN(len(pieces))])
		}
		when := time.Unix(rng.Int64N(1<<34)-1<<30, 0).In(zones[rng.IntN(len(zones))])
		s := Signature{Name: name.String(), Email: email.String(), When: when}
		if got, want := s.encode(), signatureFormat(s); got != want {
			t.Fatalf("case %d: encode() = %q, want %q", i, got, want)
		}
	}
}
