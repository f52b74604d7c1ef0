package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var sample = Event{ID: "blocked/t1@2026-01-17T09:00:00Z", Kind: KindBlocked, Task: "t1", Title: "t1 is BLOCKED: spec gap",
	Body: "Reason: spec gap\nQuestion: <b>Which</b> codes?", Action: "git liza task unblock t1", Commit: "abc", Time: "2026-01-17T10:00:00Z"}

// receiver serves a webhook on loopback that fails the first fail posts
// with a 503 and keeps the bodies of those it accepts.
type receiver struct {
	mu     sync.Mutex
	fail   int
	posts  int
	bodies []map[string]any
	titles []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.posts++
	if r.posts <= r.fail {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	var body map[string]any
	data, _ := io.ReadAll(req.Body)
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" || json.Unmarshal(data, &body) != nil {
		http.Error(w, "not a JSON POST", http.StatusBadRequest)
		return
	}
	r.bodies = append(r.bodies, body)
	r.titles = append(r.titles, req.Header.Get("Title"))
}

func TestWebhookRetries(t *testing.T) {
	r := &receiver{fail: 2}
	srv := httptest.NewServer(r)
	defer srv.Close()
	w := &Webhook{URL: srv.URL, Tries: 3, Backoff: time.Millisecond, Timeout: 5 * time.Second}
	if err := w.Send(context.Background(), sample); err != nil {
		t.Fatal(err)
	}
	if r.posts != 3 || len(r.bodies) != 1 {
		t.Fatalf("%d posts, %d accepted; want 3 and 1", r.posts, len(r.bodies))
	}
	b := r.bodies[0]
	for _, k := range []string{"title", "message", "text", "content"} {
		if s, _ := b[k].(string); !strings.Contains(s, "t1 is BLOCKED") {
			t.Errorf("%s = %q, want the title in it", k, s)
		}
	}
	if b["id"] != sample.ID || b["kind"] != "blocked" || b["action"] != sample.Action {
		t.Errorf("body %v", b)
	}
	if r.titles[0] != sample.Title {
		t.Errorf("Title header %q", r.titles[0])
	}
}

func TestWebhookGivesUp(t *testing.T) {
	r := &receiver{fail: 100}
	srv := httptest.NewServer(r)
	defer srv.Close()
	w := &Webhook{URL: srv.URL, Tries: 3, Backoff: time.Millisecond, Timeout: 5 * time.Second}
	err := w.Send(context.Background(), sample)
	if err == nil || !strings.Contains(err.Error(), "503") || r.posts != 3 {
		t.Fatalf("err %v after %d posts; want a 503 after 3", err, r.posts)
	}
	// A refusal is not retried.
	r2 := &receiver{}
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r2.posts++
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv2.Close()
	w = &Webhook{URL: srv2.URL, Tries: 3, Backoff: time.Millisecond, Timeout: 5 * time.Second}
	if err := w.Send(context.Background(), sample); err == nil || r2.posts != 1 {
		t.Fatalf("403: err %v after %d posts", err, r2.posts)
	}
}

func TestWebhookTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	w := &Webhook{URL: srv.URL, Tries: 2, Backoff: time.Millisecond, Timeout: 50 * time.Millisecond}
	err := w.Send(context.Background(), sample)
	if err == nil || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("err %v", err)
	}
}

func TestCommandGetsJSON(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "got")
	c := &Command{Line: "cat >> " + out + "; echo >> " + out, Timeout: 5 * time.Second}
	if err := c.Send(context.Background(), sample); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got Event
	if err := json.Unmarshal(data, &got); err != nil || got != sample {
		t.Fatalf("got %q (%v)", data, err)
	}
	c = &Command{Line: "echo 'no such room' >&2; exit 3", Timeout: 5 * time.Second}
	if err := c.Send(context.Background(), sample); err == nil || err.Error() != "exit status 3: no such room" {
		t.Fatalf("failing command: %v", err)
	}
	c = &Command{Line: "sleep 30", Timeout: 50 * time.Millisecond}
	if err := c.Send(context.Background(), sample); err == nil || !strings.Contains(err.Error(), "did not finish within 50ms") {
		t.Fatalf("hanging command: %v", err)
	}
}

func TestDesktopEscapes(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	prog := filepath.Join(dir, "notify-send")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nfor a; do printf '%s\\n' \"$a\"; done > "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := sample
	e.Title = "t1 is BLOCKED: \x1b]0;pwned\x07 & more"
	d := &Desktop{Program: prog, Timeout: 5 * time.Second}
	if err := d.Send(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	got := string(data)
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, "&lt;b&gt;Which&lt;/b&gt;") || !strings.Contains(got, "--app-name=git-liza") {
		t.Fatalf("notify-send got %q", got)
	}
}

func TestMemoryBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "liza", "notify-sent.json")
	m, err := LoadMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < MemoryKeep+10; i++ {
		m.Add(fmt.Sprintf("e%d", i))
	}
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	again, err := LoadMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.ids) != MemoryKeep || again.Sent("e9") || !again.Sent("e10") || !again.Sent(fmt.Sprintf("e%d", MemoryKeep+9)) {
		t.Fatalf("kept %d, from %s", len(again.ids), again.ids[0])
	}
	// A file that does not read is taken for empty, not an error.
	if err := os.WriteFile(path, []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := LoadMemory(path); err != nil || len(m.ids) != 0 {
		t.Fatalf("garbage: %v %d", err, len(m.ids))
	}
}
