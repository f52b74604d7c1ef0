// Package web is git liza serve: the board in a browser. Pages are
// rendered on the server with html/template from what ops reads (the
// board, a task, the audit log, alarms); a small embedded script redraws
// them when the server's events stream says refs/liza/state moved, and
// sends the human's levers (pause, resume, abort, note, unblock), which
// need the board's token always and are recorded as the operator's
// operations.
//
// What the server trusts, and why:
//   - Reading: on 127.0.0.1 anyone who can reach the port can read, as
//     anyone who can read the repository can; served beyond this machine
//     (Options.Private), every request needs the token.
//   - Levers: the token, always, as the X-Liza-Token header, a form field,
//     or the cookie that opening a page with ?token= once sets (HttpOnly,
//     SameSite=Strict), compared in constant time; only POST; a request
//     from another origin (Origin, Sec-Fetch-Site) is refused even with
//     the cookie.
//   - Host: a page asked for under a host name the server does not know
//     (DNS rebinding: another site's name pointed at 127.0.0.1) is
//     refused, so that another site's script cannot read the board.
//   - Agents' text: escaped by html/template, escape sequences and bidi
//     controls spelled out (contracts.Printable); no inline script (the
//     Content-Security-Policy allows the server's own script only).
package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// Options configure a Server.
type Options struct {
	// Service reads the board and acts for the operator: opened with no
	// agent id.
	Service *ops.Service
	// Token works the levers (and, when Private, opens every page).
	Token string
	// Private asks the token of every request, reading included: the
	// server listens beyond this machine.
	Private bool
	// Hosts are the Host header values a request may carry (host:port);
	// empty: any (a Private server, where the token guards every request).
	Hosts []string
	// MaxClients bounds the pages open on the events stream at once
	// (default 256).
	MaxClients int
	// Poll is how often the watcher looks at the ref when the system does
	// not signal its moves, and how often it looks anyway (default 250ms).
	Poll time.Duration
}

// cookieName is the cookie that holds the token once a page was opened
// with ?token=.
const cookieName = "liza_token"

// maxForm bounds a lever's request body.
const maxForm = 64 << 10

// Server is the web board. Its handlers may run concurrently; a Service
// is not safe for concurrent use, so every read of the board goes through
// mu, and every lever through leverMu, on a Service of its own: a page
// however slow to read (a whole board, a session log of 256 MiB an agent
// wrote, a diff of thousands of files) never delays a lever.
type Server struct {
	o     Options
	token [32]byte // sha256 of the token: compared in constant time
	hosts map[string]bool
	mu    sync.Mutex
	svc   *ops.Service
	// leverMu guards levers, the Service the levers act through.
	leverMu sync.Mutex
	levers  *ops.Service
	hub     *hub
	pages   *pages
	cache   boardCache
	// closing ends the events streams when the server shuts down: they
	// never end by themselves.
	closing   chan struct{}
	closeOnce sync.Once
}

// CloseStreams ends every events stream, for a shutdown (see
// http.Server.RegisterOnShutdown).
func (s *Server) CloseStreams() { s.closeOnce.Do(func() { close(s.closing) }) }

// New is the web board o describes.
func New(o Options) (*Server, error) {
	if o.Service == nil {
		return nil, errors.New("web: no Service")
	}
	if o.Service.Agent != "" {
		return nil, contracts.Invalidf("the web board acts for the operator, not for %s", o.Service.Agent)
	}
	if len(o.Token) < minToken {
		return nil, contracts.Invalidf("the token must be at least %d characters", minToken)
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 256
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	// The levers' Service acts as the pages' does (the same clock, retry
	// budget, author and mode), with nothing of the pages' reads shared.
	st := o.Service.Store
	// A repository of its own too: a Repo's caches are not shared
	// between goroutines either.
	repo, err := refstore.Open(o.Service.Repo.Dir())
	if err != nil {
		return nil, err
	}
	levers, err := ops.New(repo, ops.Options{Agent: o.Service.Agent, Generation: o.Service.Generation,
		Clock: st.Clock, Budget: st.Budget, Author: st.Author, Offline: st.Offline})
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, token: sha256.Sum256([]byte(o.Token)), svc: o.Service, levers: levers, pages: p,
		hub: newHub(o.MaxClients), closing: make(chan struct{})}
	if len(o.Hosts) > 0 {
		s.hosts = map[string]bool{}
		for _, h := range o.Hosts {
			s.hosts[strings.ToLower(h)] = true
		}
	}
	return s, nil
}

// minToken is the shortest token the server takes.
const minToken = 16

// Handler is the server's routes behind its checks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.boardPage)
	mux.HandleFunc("GET /task/{id}", s.taskPage)
	mux.HandleFunc("GET /task/{id}/session/{n}", s.sessionPage)
	mux.HandleFunc("GET /task/{id}/diff", s.diffPage)
	mux.HandleFunc("GET /log", s.logPage)
	mux.HandleFunc("GET /alarms", s.alarmsPage)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /static/{name}", s.static)
	mux.HandleFunc("POST /lever/{op}", s.lever)
	return s.guard(mux)
}

// guard makes the checks every request passes: its host, the headers
// that keep pages from being framed or sniffed, ?token=, and the token of
// a Private server.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if s.hosts != nil && !s.hosts[strings.ToLower(r.Host)] {
			http.Error(w, "this board answers only to the address it listens on", http.StatusMisdirectedRequest)
			return
		}
		if tok, ok := r.URL.Query()["token"]; ok && r.Method == http.MethodGet {
			if len(tok) != 1 || !s.tokenOK(tok[0]) {
				http.Error(w, "wrong token", http.StatusForbidden)
				return
			}
			// The token leaves the address (history, a shoulder) for a
			// cookie that only this site's requests carry.
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: tok[0], Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
			q := r.URL.Query()
			q.Del("token")
			to := r.URL.Path
			if len(q) > 0 {
				to += "?" + q.Encode()
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		if s.o.Private && !s.authorized(r) {
			http.Error(w, "this board needs its token: open it once with ?token=TOKEN", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenOK compares a token with the server's in constant time (of the
// hashes: the length of the token does not show either).
func (s *Server) tokenOK(t string) bool {
	sum := sha256.Sum256([]byte(t))
	return subtle.ConstantTimeCompare(sum[:], s.token[:]) == 1
}

// authorized says whether r carries the token: the X-Liza-Token header,
// else the cookie. (A lever's form field is read by the lever.)
func (s *Server) authorized(r *http.Request) bool {
	if t := r.Header.Get("X-Liza-Token"); t != "" {
		return s.tokenOK(t)
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return s.tokenOK(c.Value)
	}
	return false
}

// sameOrigin refuses a request a page of another site made: browsers send
// Origin with every POST and Sec-Fetch-Site with every request; a client
// that sends neither (curl, a script) is no browser another site drives.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	for _, scheme := range []string{"http://", "https://"} {
		if strings.EqualFold(origin, scheme+r.Host) {
			return true
		}
	}
	return false
}

// LoopbackHosts are the Host values a server on a loopback address
// answers to: the names of this machine with the port it listens on.
func LoopbackHosts(addr net.Addr) []string {
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return nil
	}
	return []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port}
}

// boardCache keeps the board read for one tip, for a second: fifty pages
// redrawing after one move read it once.
type boardCache struct {
	tip   refstore.Hash
	at    time.Time
	board *ops.Board
	log   []ops.LogEntry
	// pages are the board pages rendered from it, by address: fifty
	// pages redrawing after a move are rendered once.
	pages map[string][]byte
}

// board reads the board and its latest operations, from the cache when
// the tip has not moved in the last second. The caller holds s.mu.
func (s *Server) board(ctx context.Context) (*ops.Board, []ops.LogEntry, error) {
	tip, _, err := s.svc.Repo.ReadRef(refstore.StateRef)
	if err != nil {
		return nil, nil, err
	}
	c := &s.cache
	if c.board != nil && c.tip == tip && time.Since(c.at) < time.Second {
		return c.board, c.log, nil
	}
	b, err := s.svc.Status(ctx, ops.StatusRequest{})
	if err != nil {
		return nil, nil, err
	}
	log, err := s.svc.Log(ctx, ops.LogRequest{Max: 10})
	if err != nil {
		return nil, nil, err
	}
	*c = boardCache{tip: tip, at: time.Now(), board: b, log: log, pages: map[string][]byte{}}
	return b, log, nil
}

// httpStatus is the status code of an operation's error.
func httpStatus(err error) int {
	switch ops.Class(err) {
	case contracts.CodeInvalid:
		return http.StatusConflict
	case contracts.CodeContention:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
