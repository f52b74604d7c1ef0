package web

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// A coder commits a highly compressible file to its task branch: a small
// object in the repository, a patch of 64 MiB. The diff page reads at most
// maxPatch (512 KiB) of git diff's output and stops git there, where it
// read the whole patch before cutting it, under the server's one lock: the
// cockpit's memory was the agent's to size, and every lever waited.
func TestDiffPageReadsABoundedPatch(t *testing.T) {
	b := newBoard(t, Options{})
	gitIn := b.onTaskA(t)
	const size = 64 << 20 // 64 MiB of lines of 1 KiB: a blob of well under 1 MiB in the repository
	if err := os.WriteFile(filepath.Join(b.root, "a.txt"), []byte(strings.Repeat(strings.Repeat("a", 1023)+"\n", size/1024)), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn("add", "a.txt")
	gitIn("commit", "-q", "-m", "a")
	gitIn("gc", "-q")
	packed := gitIn("count-objects", "-vH")
	t.Logf("repository after the commit: %s", strings.ReplaceAll(packed, "\n", "; "))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	wg.Add(1)
	var diffTook time.Duration
	go func() {
		defer wg.Done()
		start := time.Now()
		req, _ := http.NewRequest("GET", b.ts.URL+"/task/a/diff", nil)
		res, body := do(t, req)
		diffTook = time.Since(start)
		if res.StatusCode != http.StatusOK {
			t.Errorf("diff page: %d", res.StatusCode)
		}
		_ = body
	}()
	// The person pulls the pause lever while the page is made.
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	res, text := post(t, b, "/lever/pause", url.Values{"reason": {"stop"}}, map[string]string{"X-Liza-Token": testToken, "Accept": "text/plain"})
	leverTook := time.Since(start)
	wg.Wait()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("diff page took %v; the pause lever (%d %s) waited %v; the server allocated %d MiB for a page cut to %d KiB",
		diffTook.Round(time.Millisecond), res.StatusCode, strings.TrimSpace(text), leverTook.Round(time.Millisecond), alloc>>20, maxPatch>>10)
	if alloc > 16<<20 {
		t.Errorf("the diff page allocated %d MiB reading a patch it shows 512 KiB of (unpacked %d MiB from a small blob): an agent's commit sizes the cockpit's memory", alloc>>20, size>>20)
	}
	if res.StatusCode != http.StatusOK {
		t.Errorf("the pause lever beside the diff page: %d %s", res.StatusCode, text)
	}
}
