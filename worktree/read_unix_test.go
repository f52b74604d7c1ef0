//go:build unix

package worktree

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadSmall: a registration's file is read whole whatever its length
// (around the buffer's), a missing one is reported missing, and a FIFO in
// its place does not block the read.
func TestReadSmall(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 29, 511, 512, 513, 1024, 5000} {
		want := bytes.Repeat([]byte("x"), n)
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok := readSmall(p)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read %d bytes, ok %v", n, len(got), ok)
		}
	}
	if _, ok := readSmall(filepath.Join(dir, "missing")); ok {
		t.Fatal("a missing file was read")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	if got, ok := readSmall(fifo); len(got) != 0 {
		t.Fatalf("a FIFO read %q (ok %v)", got, ok)
	}
}

// TestResolver: resolving registrations' paths a directory at a time gives
// what realPath gives: under a linked directory, a link itself, a path
// that does not exist.
func TestResolver(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"real/a", "real/b", "other/c"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"linked": "real", "real/ln": filepath.Join(dir, "other", "c")} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	r := resolver{}
	for _, p := range []string{"real/a", "linked/a", "linked/b", "real/ln", "linked/ln", "linked/gone", "gone/x", "real/a/"} {
		p = filepath.Join(dir, p)
		if got, want := r.real(p), realPath(p); got != want {
			t.Errorf("%s: %s, want %s", p, got, want)
		}
	}
}
