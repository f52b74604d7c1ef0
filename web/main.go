package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// Program is the name of the program git liza serve runs.
const Program = "git-liza-serve"

// DefaultAddr is where the board listens unless --addr says otherwise:
// this machine only.
const DefaultAddr = "127.0.0.1:7428"

const usage = "usage: git liza serve [--addr HOST:PORT] [--token-file PATH]"

// Main is the program git-liza-serve, which git liza serve runs: a
// program of its own, so that the HTTP server and the templates do not
// slow the start of every short command. args are its arguments after the
// program name; getenv reads the environment (the operator's git
// identity); it returns the exit code once ctx ends. It says where it
// listens on stdout, with the token when it made one.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(Program, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", DefaultAddr, "the address to listen on, HOST:PORT")
	tokenFile := fs.String("token-file", "", "a file holding the token the levers (and, beyond this machine, every page) need")
	fail := func(err error) int {
		fmt.Fprintf(stderr, "git-liza: %s\n", contracts.Printable(err.Error()))
		return int(ops.Class(err))
	}
	if err := fs.Parse(args); err != nil {
		return int(contracts.CodeInvalid)
	}
	if fs.NArg() > 0 {
		return fail(contracts.Invalidf("%s", usage))
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return fail(contracts.Invalidf("--addr %s: want HOST:PORT, such as %s", *addr, DefaultAddr))
	}
	local := loopback(host)
	if !local && *tokenFile == "" {
		return fail(contracts.Invalidf("--addr %s is reached from other machines: give --token-file PATH, a file only you can read that holds the token every page will ask for", *addr))
	}
	token, made := "", false
	if *tokenFile != "" {
		if token, err = readToken(*tokenFile); err != nil {
			return fail(err)
		}
	} else {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fail(err)
		}
		token, made = hex.EncodeToString(b[:]), true
	}
	dir, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	if err := refstore.CheckGit(); err != nil {
		return fail(err)
	}
	repo, err := refstore.Open(dir)
	if err != nil {
		return fail(err)
	}
	if *tokenFile != "" {
		if err := outsideRepo(repo, *tokenFile); err != nil {
			return fail(err)
		}
	}
	// The board is read again at each move and each page: what did not
	// change is not decoded again.
	svc, err := ops.New(repo, ops.Options{Author: ops.OperatorAuthor(repo, getenv), KeepDecoded: true})
	if err != nil {
		return fail(err)
	}
	// A board that cannot be read says so before anything listens.
	if _, err := svc.Status(ctx, ops.StatusRequest{}); err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(contracts.Invalidf("listening on %s: %v", *addr, err))
	}
	o := Options{Service: svc, Token: token, Private: !local}
	if local {
		o.Hosts = LoopbackHosts(ln.Addr())
	}
	srv, err := New(o)
	if err != nil {
		ln.Close()
		return fail(err)
	}
	url := "http://" + ln.Addr().String() + "/"
	if made {
		fmt.Fprintf(stdout, "the board is at %s (open %s?token=%s once to work the levers from that browser)\n", url, url, token)
	} else {
		fmt.Fprintf(stdout, "the board is at %s (open it once with ?token= and the token of %s)\n", url, *tokenFile)
	}
	hs := &http.Server{
		Handler: srv.Handler(),
		// A client that sends its request slowly is let go: a page's
		// request is small (a lever's form is at most 64 KiB).
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second, // the events stream sets its own
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	hs.RegisterOnShutdown(srv.CloseStreams)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go srv.Watch(wctx)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fail(err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return 0
}

// loopback says whether host names this machine only.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// outsideRepo refuses a token file inside the repository (its checkouts,
// the task worktrees under them, its git directory): agents read and
// write there, and the token works the operator's levers, which sign as
// the operator where state commits are signed.
func outsideRepo(repo *refstore.Repo, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return contracts.Invalidf("--token-file %s: %v", path, err)
	}
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		abs = p
	}
	for _, dir := range []string{repo.MainWorkTree(), repo.CommonDir, repo.GitDir} {
		if dir == "" {
			continue
		}
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			dir = d
		}
		if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return contracts.Invalidf("--token-file %s is inside the repository, where agents read and write: keep it outside, such as ~/.liza-token", path)
		}
	}
	return nil
}

// readToken reads the token of a --token-file: its first line, at least
// minToken characters, from a file no one else may read (the token opens
// the levers; git-liza refuses one readable by others, as ssh refuses
// such a key).
func readToken(path string) (string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", contracts.Invalidf("--token-file %s does not exist", path)
	}
	if err != nil {
		return "", contracts.Invalidf("--token-file %s: %v", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", contracts.Invalidf("--token-file %s is not a file", path)
	}
	// Windows keeps no such bits: its access lists are the user's to set.
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return "", contracts.Invalidf("--token-file %s is readable by others (mode %04o): chmod 600 %s", path, perm, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", contracts.Invalidf("--token-file %s: %v", path, err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	token := strings.TrimSpace(line)
	if len(token) < minToken {
		return "", contracts.Invalidf("--token-file %s holds a token of %d characters: it needs at least %d (openssl rand -hex 24 makes one)", path, len(token), minToken)
	}
	return token, nil
}
