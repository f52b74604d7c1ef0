package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the most lines a non-test Go file of the module may
// have: a file that reads in one sitting. A file that grows past it is
// split by concern, not trimmed.
const maxFileLines = 600

// longFiles lists the non-test Go files under root with more than max
// lines, as "path: N lines", skipping test files, testdata and hidden
// directories (worktrees and caches live there).
func longFiles(root string, max int) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
		if n > max {
			rel, _ := filepath.Rel(root, path)
			out = append(out, fmt.Sprintf("%s: %d lines", filepath.ToSlash(rel), n))
		}
		return nil
	})
	return out, err
}

func TestFileSize(t *testing.T) {
	long, err := longFiles(".", maxFileLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range long {
		t.Errorf("%s, over %d: split it by concern", f, maxFileLines)
	}
}

// TestFileSizeCounts checks the counter on a tree made for it: a file of
// 601 lines is named, one of 600 is not, nor are test files or testdata.
func TestFileSizeCounts(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, lines int) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("//\n", lines)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/long.go", 601)
	write("a/fits.go", 600)
	write("a/long_test.go", 900)
	write("a/testdata/x.go", 900)
	write("b/c/deep.go", 700)
	got, err := longFiles(root, 600)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/long.go: 601 lines", "b/c/deep.go: 700 lines"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("longFiles = %q, want %q", got, want)
	}
}
