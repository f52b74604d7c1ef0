package web

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/liza-dev/git-liza/refstore"
)

// hub fans one watcher of refs/liza/state out to every page open on the
// events stream: a move of the board costs one look at the ref, whatever
// the number of pages, and no page starts a process of its own.
type hub struct {
	mu      sync.Mutex
	max     int
	clients map[chan string]struct{}
	tip     string // the last tip told
}

func newHub(max int) *hub { return &hub{max: max, clients: map[chan string]struct{}{}} }

// join adds a page, or says the hub is full. Its channel holds the latest
// tip only: a page that reads slowly skips to the newest.
func (h *hub) join() (chan string, string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.clients) >= h.max {
		return nil, "", false
	}
	c := make(chan string, 1)
	h.clients[c] = struct{}{}
	return c, h.tip, true
}

func (h *hub) leave(c chan string) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// tell sends a new tip to every page, replacing one it has not read yet.
func (h *hub) tell(tip string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if tip == h.tip {
		return
	}
	h.tip = tip
	for c := range h.clients {
		select {
		case <-c:
		default:
		}
		c <- tip
	}
}

// Clients is how many pages are open on the events stream.
func (s *Server) Clients() int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return len(s.hub.clients)
}

// Watch tells the pages each move of refs/liza/state until ctx ends. It
// sleeps on the system's notice of the ref's file (refstore.WatchRef) and
// looks at the ref every Poll besides, since a move made otherwise (a
// packed ref, a fetch in remote mode, another ref storage) is not
// signalled.
func (s *Server) Watch(ctx context.Context) {
	repo := s.svc.Repo
	w := repo.WatchRef(refstore.StateRef)
	defer w.Close()
	look := func() {
		if tip, ok, err := repo.ReadRef(refstore.StateRef); err == nil && ok {
			s.hub.tell(tip.String())
		}
	}
	look()
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.C:
		case <-t.C:
			w.Rearm()
		}
		look()
	}
}

// events is the stream of a page: the tip now, then each new one, as
// server-sent events ("event: state", data the commit id), with a comment
// every 20 seconds that keeps proxies from closing it.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	c, tip, ok := s.hub.join()
	if !ok {
		http.Error(w, "too many pages are open on this board", http.StatusServiceUnavailable)
		return
	}
	defer s.hub.leave(c)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The server's write timeout is for pages; the stream sets one per
	// write instead, so that a reader that stops reading is let go.
	send := func(text string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprint(w, text); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	first := "retry: 1000\n\n"
	if tip != "" {
		first = "retry: 1000\nevent: state\ndata: " + tip + "\n\n"
	}
	if !send(first) {
		return
	}
	ping := time.NewTicker(20 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case tip := <-c:
			if !send("event: state\ndata: " + tip + "\n\n") {
				return
			}
		case <-ping.C:
			if !send(": ping\n\n") {
				return
			}
		}
	}
}
