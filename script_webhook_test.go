package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdWebhook serves a webhook receiver on 127.0.0.1 for the rest of the
// script: webhook VAR LOG [FAILS]. VAR is set to its URL. Each POST is
// appended to LOG as one line: the status answered, and the kind and id of
// the event its JSON body carries; the first FAILS posts are answered 503.
func cmdWebhook(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: webhook VAR LOG [FAILS]")
	}
	fails := 0
	if len(args) == 3 {
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		fails = n
	}
	logPath := ts.MkAbs(args[1])
	var mu sync.Mutex
	posts := 0
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		posts++
		var ev struct{ ID, Kind, Title, Message string }
		data, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		status := http.StatusOK
		switch {
		case r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(data, &ev) != nil:
			status = http.StatusBadRequest
		case ev.Title == "" || ev.Message == "":
			status = http.StatusUnprocessableEntity
		case posts <= fails:
			status = http.StatusServiceUnavailable
		}
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d %s %s\n", status, ev.Kind, ev.ID)
			f.Close()
		}
		w.WriteHeader(status)
	})}
	go srv.Serve(l)
	ts.Defer(func() { srv.Close() })
	ts.Setenv(args[0], "http://"+l.Addr().String()+"/hook")
}
