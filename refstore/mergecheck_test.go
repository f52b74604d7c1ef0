package refstore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The output of merge-tree is read within bounds: a branch an agent
// crafted may conflict in thousands of files, or in one whose name is a
// megabyte of terminal escapes.
func TestParseMergeTreeBounded(t *testing.T) {
	tree := strings.Repeat("ab", 20)
	hostile := "a\nb\x1b]0;owned\x07.go"
	out := tree + "\x00" + "x.go\x00" + hostile + "\x00" + "x.go\x00"
	m, err := parseMergeTree([]byte(out), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Conflicts) != 2 || m.Conflicts[0] != "x.go" || m.Conflicts[1] != hostile || m.More != 0 {
		t.Fatalf("conflicts %q, more %d: want x.go and the hostile name once each, as git wrote them", m.Conflicts, m.More)
	}

	// Many files: MaxConflictNames are named, the rest counted.
	var b strings.Builder
	b.WriteString(tree + "\x00")
	for i := range MaxConflictNames + 7 {
		b.WriteString("f" + strings.Repeat("x", i) + "\x00")
	}
	m, err = parseMergeTree([]byte(b.String()), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Conflicts) != MaxConflictNames || m.More != 7 {
		t.Fatalf("%d named, %d more: want %d and 7", len(m.Conflicts), m.More, MaxConflictNames)
	}

	// Output cut at the byte bound: the name cut in two is not named but
	// counted, and so is what git wrote past the bound.
	m, err = parseMergeTree([]byte(tree+"\x00x.go\x00y.g"), true, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Conflicts) != 1 || m.Conflicts[0] != "x.go" || m.More < 1 {
		t.Fatalf("conflicts %q, more %d: want x.go and at least one more", m.Conflicts, m.More)
	}

	// A name longer than the bound is shortened, never kept whole.
	long := strings.Repeat("\x1b[2J", 10000)
	m, err = parseMergeTree([]byte(tree+"\x00"+long+"\x00"), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Conflicts) != 1 || len(m.Conflicts[0]) > maxConflictName+len("...") {
		t.Fatalf("a %d-byte name came back as %d bytes", len(long), len(m.Conflicts[0]))
	}

	// A conflict git reported without any name still reads as one.
	m, err = parseMergeTree([]byte(tree+"\x00"), true, 5)
	if err != nil || !m.Conflicted() {
		t.Fatalf("a conflicted merge with no name read: %v, %+v", err, m)
	}
	// No tree id first: git's output is not what it should be.
	if _, err := parseMergeTree([]byte("x.go\x00"), true, 0); err == nil {
		t.Fatal("output without a tree id was accepted")
	}
	// A clean merge is its tree.
	m, err = parseMergeTree([]byte(tree+"\n"), false, 0)
	if err != nil || m.Conflicted() || m.Tree.String() != tree {
		t.Fatalf("a clean merge: %v, %+v", err, m)
	}
}

// limitedBuffer keeps the first bytes and counts the rest.
func TestLimitedBuffer(t *testing.T) {
	var b limitedBuffer
	b.max = 4
	b.Write([]byte("abc"))
	b.Write([]byte("defg"))
	if string(b.buf) != "abcd" || b.dropped != 3 {
		t.Fatalf("kept %q, dropped %d", b.buf, b.dropped)
	}
}

// A real conflict in a file whose name holds a newline and a terminal
// escape: git's -z output gives the name whole, and MergeCheck keeps it
// as git wrote it (escaping is the printer's).
func TestMergeCheckHostileName(t *testing.T) {
	dir := newRepo(t)
	name := "a\nb\x1b[2J.txt"
	writeFile(t, filepath.Join(dir, name), "base\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "base")
	git(t, dir, "checkout", "-q", "-b", "other")
	writeFile(t, filepath.Join(dir, name), "other\n")
	git(t, dir, "commit", "-q", "-am", "other")
	git(t, dir, "checkout", "-q", "main")
	writeFile(t, filepath.Join(dir, name), "main\n")
	git(t, dir, "commit", "-q", "-am", "main")
	r := open(t, dir)
	ours, _ := ParseHash(git(t, dir, "rev-parse", "main"))
	theirs, _ := ParseHash(git(t, dir, "rev-parse", "other"))
	m, err := r.MergeCheck(context.Background(), ours, theirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Conflicts) != 1 || m.Conflicts[0] != name || m.More != 0 {
		t.Fatalf("conflicts %q, more %d: want %q alone", m.Conflicts, m.More, name)
	}
	// The files a branch changes, read the same way.
	files, complete, err := r.ChangedFiles(context.Background(), ours, theirs, 10)
	if err != nil || !complete || len(files) != 1 || files[0] != name {
		t.Fatalf("changed files %q (complete %v): %v", files, complete, err)
	}
}
