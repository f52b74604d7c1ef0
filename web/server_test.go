package web

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/ops"
)

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func post(t *testing.T, b *board, path string, form url.Values, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", b.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.ts.URL)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

// A lever without the token is refused, and the board does not move; with
// it, the operation lands as the operator's.
func TestLeverNeedsToken(t *testing.T) {
	b := newBoard(t, Options{})
	before := b.lastOp(t)
	for _, h := range []map[string]string{nil, {"X-Liza-Token": "wrong"}, {"X-Liza-Token": testToken[:len(testToken)-1]}} {
		res, body := post(t, b, "/lever/pause", url.Values{"reason": {"lunch"}}, h)
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("pause with %v: %d %s, want 403", h, res.StatusCode, body)
		}
	}
	if got := b.lastOp(t); got.Commit != before.Commit {
		t.Fatalf("a refused lever moved the board: %s", got.Subject)
	}
	res, body := post(t, b, "/lever/pause", url.Values{"reason": {"lunch"}}, map[string]string{"X-Liza-Token": testToken, "Accept": "text/plain"})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("pause with the token: %d %s", res.StatusCode, body)
	}
	got := b.lastOp(t)
	if got.Op != "pause" || got.Agent != "human" {
		t.Errorf("the pause is recorded as %q by %q, want pause by human", got.Op, got.Agent)
	}
	// The token as a form field does as well.
	res, body = post(t, b, "/lever/note", url.Values{"message": {"use the v2 API"}, "for": {"a"}, "token": {testToken}}, map[string]string{"Accept": "text/plain"})
	if res.StatusCode != http.StatusOK || b.lastOp(t).Op != "note" {
		t.Errorf("note with the token as a field: %d %s; last op %s", res.StatusCode, body, b.lastOp(t).Op)
	}
}

// Opening the board with ?token= once sets a cookie that the page's forms
// carry (HttpOnly, SameSite=Strict) and drops the token from the address;
// a wrong token is refused.
func TestTokenCookie(t *testing.T) {
	b := newBoard(t, Options{})
	req, _ := http.NewRequest("GET", b.ts.URL+"/task/a?token="+testToken, nil)
	res, _ := do(t, req)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/task/a" {
		t.Fatalf("?token=: %d to %q, want 303 to /task/a", res.StatusCode, res.Header.Get("Location"))
	}
	var ck *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == cookieName {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Value != testToken {
		t.Fatalf("cookie %+v, want HttpOnly SameSite=Strict holding the token", ck)
	}
	req, _ = http.NewRequest("GET", b.ts.URL+"/?token=nope", nil)
	if res, _ := do(t, req); res.StatusCode != http.StatusForbidden {
		t.Errorf("a wrong ?token=: %d, want 403", res.StatusCode)
	}
	// The cookie works the levers.
	req, _ = http.NewRequest("POST", b.ts.URL+"/lever/resume", nil)
	req.Header.Set("Origin", b.ts.URL)
	req.Header.Set("Accept", "text/plain")
	req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
	if res, body := do(t, req); res.StatusCode != http.StatusOK {
		t.Errorf("resume with the cookie: %d %s", res.StatusCode, body)
	}
}

// Another site open in the same browser cannot pull a lever: a request
// from another origin is refused even with the cookie, and nothing that
// changes the board answers GET.
func TestCrossSiteRefused(t *testing.T) {
	b := newBoard(t, Options{})
	before := b.lastOp(t)
	ck := &http.Cookie{Name: cookieName, Value: testToken}
	for _, h := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Origin": "null"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
	} {
		req, _ := http.NewRequest("POST", b.ts.URL+"/lever/abort", strings.NewReader("reason=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(ck)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		if res, body := do(t, req); res.StatusCode != http.StatusForbidden {
			t.Errorf("abort with %v: %d %s, want 403", h, res.StatusCode, body)
		}
	}
	for _, m := range []string{"GET", "HEAD", "PUT", "DELETE"} {
		req, _ := http.NewRequest(m, b.ts.URL+"/lever/abort?token="+testToken+"&reason=x", nil)
		req.AddCookie(ck)
		if res, _ := do(t, req); res.StatusCode != http.StatusMethodNotAllowed && res.StatusCode != http.StatusSeeOther {
			t.Errorf("%s /lever/abort: %d, want 405", m, res.StatusCode)
		}
	}
	if got := b.lastOp(t); got.Commit != before.Commit {
		t.Fatalf("a cross-site request moved the board: %s", got.Subject)
	}
}

// A page asked for under another host name (DNS rebinding: a site whose
// name now resolves to 127.0.0.1) is refused.
func TestHostChecked(t *testing.T) {
	b := newBoard(t, Options{})
	_, port, _ := net.SplitHostPort(b.ts.Listener.Addr().String())
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.2:" + port} {
		req, _ := http.NewRequest("GET", b.ts.URL+"/", nil)
		req.Host = host
		if res, _ := do(t, req); res.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %s: %d, want 421", host, res.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", b.ts.URL+"/", nil)
	if res, body := do(t, req); res.StatusCode != http.StatusOK || !strings.Contains(body, "ship it") {
		t.Errorf("the board: %d\n%s", res.StatusCode, body)
	}
}

// What agents write is shown, never run: a title with a script, an
// escape sequence for a terminal.
func TestAgentTextEscaped(t *testing.T) {
	b := newBoard(t, Options{})
	ctx := context.Background()
	evil := "<script>alert(1)</script>\x1b[2J\u202e"
	if _, err := b.human.As("coder-1", 0).Block(ctx, ops.BlockRequest{Task: "a", Reason: evil, Questions: []string{"<img src=x onerror=alert(2)>?"}}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/task/a", "/log", "/alarms"} {
		req, _ := http.NewRequest("GET", b.ts.URL+path, nil)
		res, body := do(t, req)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, res.StatusCode, body)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") || strings.ContainsAny(body, "\x1b\u202e") {
			t.Errorf("%s shows an agent's text raw:\n%s", path, body)
		}
		if !strings.Contains(body, `&lt;script&gt;alert(1)&lt;/script&gt;\x1b[2J`) {
			t.Errorf("%s does not show the reason escaped:\n%s", path, body)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
	}
}

// A page opened on the events stream hears of each move of the board.
func TestEventOnStateMove(t *testing.T) {
	b := newBoard(t, Options{})
	req, _ := http.NewRequest("GET", b.ts.URL+"/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- d
			}
		}
		close(events)
	}()
	if first := <-events; first != b.lastOp(t).Commit {
		t.Fatalf("first event %q, want the tip %s", first, b.lastOp(t).Commit)
	}
	if _, err := b.human.Note(context.Background(), ops.NoteRequest{Message: "hello"}); err != nil {
		t.Fatal(err)
	}
	if got, want := <-events, b.lastOp(t).Commit; got != want {
		t.Errorf("event after a note: %q, want %s", got, want)
	}
}

// The events stream takes a bounded number of pages.
func TestEventsBounded(t *testing.T) {
	b := newBoard(t, Options{MaxClients: 2})
	for i := range 3 {
		req, _ := http.NewRequest("GET", b.ts.URL+"/events", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		want := http.StatusOK
		if i == 2 {
			want = http.StatusServiceUnavailable
		}
		if res.StatusCode != want {
			t.Errorf("client %d: %d, want %d", i+1, res.StatusCode, want)
		}
	}
}

// A huge form is refused before it is read whole.
func TestBodyBounded(t *testing.T) {
	b := newBoard(t, Options{})
	res, _ := post(t, b, "/lever/note", url.Values{"message": {strings.Repeat("x", 1<<20)}}, map[string]string{"X-Liza-Token": testToken})
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 1 MiB note: %d, want 413", res.StatusCode)
	}
}

// A board served beyond this machine shows nothing without the token.
func TestPrivateNeedsToken(t *testing.T) {
	b := newBoard(t, Options{Private: true})
	for _, path := range []string{"/", "/task/a", "/log", "/events", "/alarms"} {
		req, _ := http.NewRequest("GET", b.ts.URL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body []byte
		if res.StatusCode != http.StatusOK { // a stream would not end
			body, _ = io.ReadAll(res.Body)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "ship it") {
			t.Errorf("%s without the token: %d", path, res.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", b.ts.URL+"/", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
	if res, body := do(t, req); res.StatusCode != http.StatusOK || !strings.Contains(body, "ship it") {
		t.Errorf("/ with the token: %d", res.StatusCode)
	}
}
