package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// A page is read under the pages' lock, and what an agent writes decides
// how long a read takes: a session page of a 256 MiB log took 3.8 s on a
// board of 10,000 tasks, and with three browsers on it the abort waited 8
// to 12 s. The abort must not wait for a page. The lock is held here as
// such a read holds it.
func TestLeverDoesNotWaitForAPage(t *testing.T) {
	b := newBoard(t, Options{})
	b.srv.mu.Lock() // a page is being read
	held := true
	defer func() {
		if held {
			b.srv.mu.Unlock()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", b.ts.URL+"/lever/abort", strings.NewReader(url.Values{"reason": {"stop now"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Liza-Token", testToken)
	req.Header.Set("Accept", "text/plain")
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the abort was not answered within 2 s while a page was being read: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("abort: %d", res.StatusCode)
	}
	t.Logf("abort answered in %v while a page held the pages' lock", time.Since(start))
	b.srv.mu.Unlock()
	held = false
	st, err := b.human.Status(context.Background(), ops.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode != contracts.ModeAborted {
		t.Errorf("mode %s after the abort, want %s", st.Mode, contracts.ModeAborted)
	}
	// The page that was waiting shows the abort.
	if body := get(t, b, "/"); !strings.Contains(body, "ABORTED") {
		t.Errorf("the board does not show ABORTED after the abort")
	}
}
