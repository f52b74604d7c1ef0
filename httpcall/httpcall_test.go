package httpcall_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/httpcall"
	"github.com/liza-dev/git-liza/httpdo"
)

// This test binary is also the program git-liza-http, under that name on
// PATH, so that the requests go through a real process as in git-liza.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == httpcall.Program {
		os.Exit(httpdo.Main(context.Background(), os.Stdin, os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "httpcall-")
	if err != nil {
		panic(err)
	}
	exe, _ := os.Executable()
	if err := os.Symlink(exe, filepath.Join(dir, httpcall.Program)); err != nil {
		panic(err)
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// A request goes to the program and back: the method, the headers and the
// body reach the server, its status and body come back, bounded.
func TestDoThroughProgram(t *testing.T) {
	var got struct{ method, title, body string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 100)
		n, _ := r.Body.Read(b)
		got.method, got.title, got.body = r.Method, r.Header.Get("Title"), string(b[:n])
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte(strings.Repeat("x", httpcall.MaxBody+10)))
	}))
	defer srv.Close()
	resp, err := httpcall.Do(context.Background(), httpcall.Request{Method: "POST", URL: srv.URL,
		Header: map[string]string{"Title": "t3 blocked"}, Body: []byte(`{"id":"x"}`), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 418 || resp.StatusText != "418 I'm a teapot" || len(resp.Body) != httpcall.MaxBody {
		t.Errorf("response %d %q, body of %d bytes", resp.Status, resp.StatusText, len(resp.Body))
	}
	if got.method != "POST" || got.title != "t3 blocked" || got.body != `{"id":"x"}` {
		t.Errorf("the server got %+v", got)
	}
}

// No answer: a closed port says why, a server that hangs times out; a
// body over the bound is refused before anything is sent.
func TestDoFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	resp, err := httpcall.Do(context.Background(), httpcall.Request{Method: "GET", URL: "http://" + addr, Timeout: 5 * time.Second})
	if err != nil || resp.Err == "" || !strings.Contains(resp.Err, "refused") {
		t.Errorf("closed port: %+v, %v", resp, err)
	}
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	resp, err = httpcall.Do(context.Background(), httpcall.Request{Method: "GET", URL: srv.URL, Timeout: 300 * time.Millisecond})
	if err != nil || !resp.TimedOut {
		t.Errorf("hanging server: %+v, %v", resp, err)
	}
	if _, err := httpcall.Do(context.Background(), httpcall.Request{Method: "POST", URL: srv.URL, Body: make([]byte, httpcall.MaxBody+1)}); err == nil {
		t.Error("an oversized body was sent")
	}
}

// Without the program, a request is one clear error naming the fix.
func TestDoWithoutProgram(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := httpcall.Do(context.Background(), httpcall.Request{Method: "GET", URL: "http://127.0.0.1:1", Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "go install github.com/liza-dev/git-liza/git-liza-http@latest") {
		t.Errorf("err %v", err)
	}
}
