package ops_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/liza-dev/git-liza/proc"
)

// TestQueueUnderTest: the batch under test is what the merge queue's
// process says in .git/liza/queue.json, believed only while that process
// lives and only when it names tasks by valid ids: a file left by a dead
// process, or one an agent wrote with escapes for ids, shows nothing.
func TestQueueUnderTest(t *testing.T) {
	svc, root := newBoard(t)
	ctx := context.Background()
	file := filepath.Join(root, ".git", "liza", "queue.json")
	put := func(text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	me := proc.Me().String()
	put(`{"owner": "` + me + `", "batch": ["a", "b", "c"], "testing": ["a", "b"], "since": "2026-01-17T10:00:00Z"}`)
	q, err := svc.Queue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.Batch, []string{"a", "b", "c"}) || !slices.Equal(q.Testing, []string{"a", "b"}) || q.Owner != me || q.MergeBatch != 8 {
		t.Errorf("queue = %+v, want the batch a, b, c with a, b under test, by this process, batches of 8", q)
	}
	for name, text := range map[string]string{
		"a dead process's": `{"owner": "pid 2147483646 on ` + proc.Me().Host + `", "batch": ["a"]}`,
		"escapes for ids":  `{"owner": "` + me + `", "batch": ["a\u001b]0;owned\u0007"]}`,
		"not JSON":         `{"owner": `,
		"an empty batch":   `{"owner": "` + me + `", "batch": []}`,
		"a path for an id": `{"owner": "` + me + `", "batch": ["../x"]}`,
	} {
		put(text)
		if q, err := svc.Queue(ctx); err != nil {
			t.Fatal(err)
		} else if len(q.Batch) > 0 || q.Owner != "" {
			t.Errorf("%s file: queue = %+v, want no batch under test", name, q)
		}
	}
}
