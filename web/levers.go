package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// lever pulls one of the human's levers: POST /lever/pause (reason),
// resume, abort (reason), note (message, for) and unblock (task). Each is
// the operator's ordinary operation, as the command line makes it, so
// that git liza log shows it like any other. A request that names no
// lever, comes from another origin or lacks the token changes nothing.
func (s *Server) lever(w http.ResponseWriter, r *http.Request) {
	op := r.PathValue("op")
	if !sameOrigin(r) {
		http.Error(w, "a lever is pulled from this board's own pages only", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("the request is larger than %d bytes", maxForm), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "unreadable form", http.StatusBadRequest)
		return
	}
	field := r.PostForm.Get
	if !s.authorized(r) && (field("token") == "" || !s.tokenOK(field("token"))) {
		http.Error(w, "the levers need the board's token: open the board once with ?token=TOKEN", http.StatusForbidden)
		return
	}
	ctx := r.Context()
	var msg string
	var err error
	// Under the levers' own lock: no page being read delays a lever.
	s.leverMu.Lock()
	switch op {
	case "pause", "resume", "abort":
		mode := map[string]string{"pause": contracts.ModePaused, "resume": contracts.ModeRunning, "abort": contracts.ModeAborted}[op]
		reason := strings.TrimSpace(field("reason"))
		if op == "resume" {
			reason = ""
		}
		var out *ops.ModeResult
		if out, err = s.levers.SetMode(ctx, ops.ModeRequest{Mode: mode, Reason: reason}); err == nil {
			switch {
			case !out.Changed && mode == contracts.ModeRunning && len(out.Removed) == 0:
				msg = "the team is running; nothing to resume"
			case mode == contracts.ModeRunning:
				msg = "resumed (was " + out.From + ")"
			case !out.Changed:
				msg = fmt.Sprintf("already %s since %s by %s", mode, out.Since, out.By)
			default:
				msg = fmt.Sprintf("%s by %s at %s", mode, out.By, out.Since)
			}
			// As the command line says: the seed's files it lifted, and
			// those that still halt this checkout.
			for _, p := range out.Removed {
				msg += "; removed " + p
			}
			for _, p := range out.Files {
				msg += fmt.Sprintf("; %s is still present in %s and keeps this checkout %s", p, out.Root, contracts.SwitchFiles[p])
			}
		}
	case "note":
		var out *ops.EntryResult
		if out, err = s.levers.Note(ctx, ops.NoteRequest{Message: field("message"), For: strings.TrimSpace(field("for"))}); err == nil {
			msg = fmt.Sprintf("note %d left", out.N)
			if out.For != "" {
				msg += " for " + out.For
			}
		}
	case "unblock":
		var out *ops.TaskResult
		if out, err = s.levers.Unblock(ctx, ops.UnblockRequest{Task: strings.TrimSpace(field("task"))}); err == nil {
			msg = "task " + out.ID + " " + out.Verb + ": " + string(out.Status)
		}
	default:
		err = contracts.Invalidf("no lever %q: pause, resume, abort, note, unblock", op)
	}
	s.leverMu.Unlock()
	code := http.StatusOK
	if err != nil {
		code, msg = httpStatus(err), err.Error()
	}
	msg = contracts.Printable(msg)
	if strings.Contains(r.Header.Get("Accept"), "text/plain") {
		// The page's script shows the line beside the levers.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		fmt.Fprintln(w, msg)
		return
	}
	// A form sent without the script: a page that says what happened.
	s.render(w, code, "result", resultPage{Message: msg, Failed: err != nil, Back: backPath(field("back"))})
}

type resultPage struct {
	Message string
	Failed  bool
	Back    string
}

// backPath is where a lever's result page links back to: a path of this
// board, never another site.
func backPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\r\n") {
		return "/"
	}
	return p
}
