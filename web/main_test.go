package web

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// git-liza-serve as the user starts it: it listens on 127.0.0.1, prints
// the address with the token it made, answers to that address, takes a
// lever with that token, and ends with its context.
func TestMainServes(t *testing.T) {
	b := newBoard(t, Options{})
	t.Chdir(b.root)
	out, w := io.Pipe()
	var stderr strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"--addr", "127.0.0.1:0"}, func(string) string { return "" }, w, &stderr)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no line: %v (stderr %s)", err, stderr.String())
	}
	go io.Copy(io.Discard, out)
	m := regexp.MustCompile(`^the board is at (http://127\.0\.0\.1:\d+/) \(open (\S+)\?token=([0-9a-f]{48}) once to work the levers from that browser\)\n$`).FindStringSubmatch(line)
	if m == nil || m[1] != m[2] {
		t.Fatalf("first line %q", line)
	}
	url, token := m[1], m[3]
	if res, err := http.Get(url); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %v", url, res, err)
	}
	localhost := strings.Replace(url, "127.0.0.1", "localhost", 1)
	if res, err := http.Get(localhost); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %v %v", localhost, res, err)
	}
	req, _ := http.NewRequest("POST", url+"lever/note", strings.NewReader("message=from+the+phone"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Liza-Token", token)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("note with the printed token: %v %v", res, err)
	}
	if got := b.lastOp(t); got.Op != "note" || got.Agent != "human" {
		t.Errorf("last operation %s by %s", got.Op, got.Agent)
	}
	// An open events stream ends with the server.
	stream, err := http.Get(url + "events")
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { io.Copy(io.Discard, stream.Body); close(ended) }()
	cancel()
	<-ended
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}
