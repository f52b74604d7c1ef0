package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A coder's branch changes 1,500 files. The task page names the first
// maxDiffFiles of them and says how many more there are, with the totals
// of the whole change: it listed every one, and 30,000 files made a page
// of 2.4 MB that every browser on the board loaded again on each change.
func TestTaskPageBoundsItsFileList(t *testing.T) {
	b := newBoard(t, Options{})
	gitIn := b.onTaskA(t)
	const files = 1500
	if err := os.MkdirAll(filepath.Join(b.root, "gen"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		if err := os.WriteFile(filepath.Join(b.root, "gen", fmt.Sprintf("f%04d.txt", i)), []byte("one\ntwo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn("add", "gen")
	gitIn("commit", "-q", "-m", "many files")

	page := get(t, b, "/task/a")
	rows := strings.Count(page, "gen/f")
	if rows != maxDiffFiles {
		t.Errorf("the task page names %d changed files, want the first %d of %d", rows, maxDiffFiles, files)
	}
	for _, want := range []string{"gen/f0000.txt", fmt.Sprintf("and %d more files", files-maxDiffFiles), fmt.Sprintf("%d files, +%d", files, 2*files)} {
		if !strings.Contains(page, want) {
			t.Errorf("the task page lacks %q", want)
		}
	}
	if strings.Contains(page, fmt.Sprintf("gen/f%04d.txt", files-1)) {
		t.Errorf("the task page names the last of %d files", files)
	}
}
