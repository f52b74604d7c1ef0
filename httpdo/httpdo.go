// Package httpdo makes the HTTP requests of package httpcall, with Go's
// HTTP client: the program git-liza-http runs it (Main), so that only that
// program links net/http and crypto/tls.
package httpdo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/liza-dev/git-liza/httpcall"
)

// Do makes one request, within its timeout.
func Do(ctx context.Context, r httpcall.Request) (httpcall.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, strings.NewReader(string(r.Body)))
	if err != nil {
		return httpcall.Response{Err: firstLine(err.Error())}, nil
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return httpcall.Response{TimedOut: true, Err: fmt.Sprintf("no answer within %s", r.Timeout)}, nil
		}
		// net/http says "Post \"URL\": ..." before the cause.
		msg := err.Error()
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			msg = ue.Unwrap().Error()
		}
		return httpcall.Response{Err: firstLine(msg)}, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, httpcall.MaxBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return httpcall.Response{Status: resp.StatusCode, StatusText: resp.Status, Body: string(body)}, nil
}

// Main reads one request as JSON on stdin, makes it, and writes the
// response as JSON on stdout: the program git-liza-http. It exits 0 when
// it has a response to give (any status, or why none came), else 1 with
// one line on stderr.
func Main(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	var r httpcall.Request
	data, err := io.ReadAll(io.LimitReader(stdin, 2*httpcall.MaxBody+4096))
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err == nil && (r.Method == "" || r.URL == "" || r.Timeout <= 0) {
		err = errors.New("a request needs a method, a URL and a timeout")
	}
	if err != nil {
		fmt.Fprintf(stderr, "git-liza-http: reads one request as JSON on stdin (it is run by git-liza): %v\n", err)
		return 1
	}
	resp, _ := Do(ctx, r)
	if err := json.NewEncoder(stdout).Encode(resp); err != nil {
		fmt.Fprintf(stderr, "git-liza-http: %v\n", err)
		return 1
	}
	return 0
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
