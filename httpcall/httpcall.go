// Package httpcall is how git-liza makes an HTTP request (a notification's
// webhook post, doctor's probe of an agent CLI's endpoint) without linking
// Go's HTTP client and TLS into every command: the request goes as JSON to
// the program git-liza-http (package httpdo), which makes it and answers
// with the response, bounded. Linking net/http and crypto/tls cost every
// short command about 1.7 ms at start-up and 6 MB of binary (measured; see
// the README).
package httpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/companion"
)

// Program is the program that makes the requests.
const Program = "git-liza-http"

// MaxBody bounds a request's body and what is kept of a response's.
const MaxBody = 64 << 10

// Request is one HTTP request.
type Request struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Header  map[string]string `json:"header,omitempty"`
	Body    []byte            `json:"body,omitempty"`
	Timeout time.Duration     `json:"timeout"`
}

// Response is what came back: a status, or why none did.
type Response struct {
	Status     int    `json:"status,omitempty"`
	StatusText string `json:"status_text,omitempty"` // "503 Service Unavailable"
	Body       string `json:"body,omitempty"`        // at most MaxBody bytes of it
	// Err says why no response came (connection refused, a name that does
	// not resolve, a bad URL); TimedOut that none came within the timeout.
	Err      string `json:"error,omitempty"`
	TimedOut bool   `json:"timed_out,omitempty"`
}

// ErrNoProgram is returned when git-liza-http is not installed.
var ErrNoProgram = errors.New(Program + " is not installed: go install github.com/liza-dev/git-liza/" + Program + "@latest")

// Exchange makes one request; tests of the packages that call it may set it
// to httpdo.Do, which makes the request in their own process.
var Exchange = runProgram

// Do makes one request through Exchange.
func Do(ctx context.Context, r Request) (Response, error) {
	if len(r.Body) > MaxBody {
		return Response{}, fmt.Errorf("a request body of %d bytes is more than %d", len(r.Body), MaxBody)
	}
	if r.Timeout <= 0 {
		r.Timeout = 10 * time.Second
	}
	return Exchange(ctx, r)
}

// runProgram hands the request to git-liza-http and reads its answer.
func runProgram(ctx context.Context, r Request) (Response, error) {
	prog, err := Find()
	if err != nil {
		return Response{}, err
	}
	in, err := json.Marshal(r)
	if err != nil {
		return Response{}, err
	}
	// The program keeps to the timeout itself; this one is for a program
	// that does not.
	ctx, cancel := context.WithTimeout(ctx, r.Timeout+5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &limited{w: &out, n: 2 * MaxBody}, &limited{w: &errb, n: 4 << 10}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return Response{}, fmt.Errorf("%s: %s", Program, firstLine(msg))
	}
	var resp Response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		return Response{}, fmt.Errorf("%s answered what is not a response: %v", Program, err)
	}
	return resp, nil
}

// Find looks for git-liza-http beside the running program first (go
// install puts them in the same directory), else on PATH.
func Find() (string, error) {
	if p, ok := companion.Find(Program); ok {
		return p, nil
	}
	return "", ErrNoProgram
}

// limited keeps at most n bytes of what is written to it.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
