//go:build unix

package worktree

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/liza-dev/git-liza/refstore"
)

// A FIFO put in place of a file listed to copy is not read (the copy
// would hang on it), nor is a name gone meanwhile.
func TestIncludeFIFO(t *testing.T) {
	r := includeRepo(t, "")
	if err := syscall.Mkfifo(filepath.Join(r.root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &Prepared{}
	if err := copyFiles(context.Background(), r.root, t.TempDir(), []string{"fifo", "gone", ".env"}, out); err != nil {
		t.Fatal(err)
	}
	want := []string{"fifo: skipped: not a regular file", "gone: skipped: gone from the main checkout"}
	if !slices.Equal(out.Skipped, want) || !slices.Equal(out.Copied, []string{".env"}) {
		t.Errorf("skipped %q, copied %q; want %q, [.env]", out.Skipped, out.Copied, want)
	}
}

// The record of what readied a worktree is read bounded, and a FIFO
// planted in its place does not hang the reader.
func TestPreparedLinesPlanted(t *testing.T) {
	r := includeRepo(t, ".env\n")
	path, _, _ := prepareAt(t, r, r.base, r.base)
	gd, err := refstore.CheckoutGitDir(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(gd, preparedRecord)
	os.Remove(rec)
	if err := syscall.Mkfifo(rec, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := PreparedLines(path); got != nil {
		t.Errorf("PreparedLines of a FIFO = %q", got)
	}
	os.Remove(rec)
	if err := os.WriteFile(rec, []byte(`["copied \u001b[2J"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := PreparedLines(path); !slices.Equal(got, []string{`"copied \x1b[2J"`}) {
		t.Errorf("PreparedLines of a planted escape = %q", got)
	}
	if err := os.WriteFile(rec, []byte(`["`+strings.Repeat("x", 1<<20)+`"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := PreparedLines(path); got != nil {
		t.Errorf("PreparedLines of a huge record = %d lines", len(got))
	}
}
