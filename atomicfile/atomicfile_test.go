package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// A file is made with its directory, replaced whole with its mode, and a
// write that cannot be made leaves the old content and no temporary file.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "file")
	if err := Write(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if err != nil || string(b) != "two\n" || fi.Mode().Perm() != 0o755 {
		t.Fatalf("file %q (%v), mode %v", b, err, fi.Mode())
	}
	if err := Write(filepath.Dir(path), []byte("x"), 0o644); err == nil {
		t.Fatal("replaced a directory with a file")
	}
	entries, _ := os.ReadDir(filepath.Dir(filepath.Dir(path)))
	if len(entries) != 1 || entries[0].Name() != "b" {
		t.Errorf("left behind: %v", entries)
	}
}
