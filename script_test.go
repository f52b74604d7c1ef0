package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/liza-dev/git-liza/commands"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/httpdo"
	"github.com/liza-dev/git-liza/mcpserver"
	"github.com/liza-dev/git-liza/relay"
	"github.com/liza-dev/git-liza/tui"
	"github.com/liza-dev/git-liza/web"
)

func TestMain(m *testing.M) {
	// Every state file the scripts' git-liza writes or reads is written
	// or read by the YAML library too, and a difference panics.
	contracts.CrossCheckCanon()
	testscript.Main(scriptsM{m}, map[string]func(){
		"git-liza": func() {
			os.Exit(commands.RunAt(context.Background(), testClock(), os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
		"git-liza-board": func() {
			os.Exit(tui.Main(context.Background(), testClock(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"git-liza-relay": func() {
			os.Exit(relay.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"git-liza-http": func() {
			os.Exit(httpdo.Main(context.Background(), os.Stdin, os.Stdout, os.Stderr))
		},
		"git-liza-serve": func() {
			os.Exit(web.Main(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
		},
		"git-liza-mcp": func() {
			os.Exit(mcpserver.Main(context.Background(), testClock(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// scriptsM runs the tests with twice as many parallel tests as
// processors unless -parallel says otherwise: a script spends much of its
// time waiting for the git and git-liza processes it starts, and on 2
// cores the scripts took 101 s instead of 131 s with 4 at a time.
// testscript calls Run only for the test binary's own run, not when it
// runs as git-liza, whose arguments are not the test flags.
type scriptsM struct{ m *testing.M }

func (s scriptsM) Run() int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
	return s.m.Run()
}

// testClock pins the clock of the git-liza the scripts run to LIZA_NOW, when
// it is set. Only this test harness reads it: the shipped binary takes the
// time from the system clock alone, so that an agent cannot date its
// operations as it likes.
func testClock() func() time.Time {
	v := os.Getenv("LIZA_NOW")
	if v == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "test harness: LIZA_NOW=%q is not a time like 2026-01-17T10:00:00Z\n", v)
		os.Exit(2)
	}
	return func() time.Time { return t }
}

// TestScript runs testdata/script/*.txtar. UPDATE_SCRIPTS=1 rewrites the
// expected output in place.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup:               setupScript,
		Condition:           scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"repo":      cmdRepo,
			"exits":     cmdExits,
			"freeport":  cmdFreePort,
			"pushboth":  cmdPushBoth,
			"httpgit":   cmdHTTPGit,
			"sshgit":    cmdSSHGit,
			"blackhole": cmdBlackhole,
			"tmuxrun":   cmdTmuxRun,
			"waitpane":  cmdWaitPane,
			"webhook":   cmdWebhook,
			"mcpcall":   cmdMCPCall,
			"signal":    cmdSignal,
			"strays":    cmdStrays,
			"proxy":     cmdProxy,
			"conns":     cmdConns,
		},
	})
}

// setupScript pins everything that would make output or hashes vary: home,
// git configuration, identities, dates and the blackboard's clock.
func setupScript(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME":     "Ada Operator",
		"GIT_AUTHOR_EMAIL":    "ada@example.com",
		"GIT_COMMITTER_NAME":  "Ada Operator",
		"GIT_COMMITTER_EMAIL": "ada@example.com",
		"GIT_AUTHOR_DATE":     "2026-01-17T10:00:00Z",
		"GIT_COMMITTER_DATE":  "2026-01-17T10:00:00Z",
		"LIZA_NOW":            "2026-01-17T10:00:00Z",
		"LIZA_AGENT_ID":       "",
		"TZ":                  "UTC",
	} {
		env.Setenv(k, v)
	}
	return os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"), 0o644)
}

// scriptCondition adds [root]: the script runs as uid 0,
// [exists:PATH]: PATH exists on this machine, [tmpfs]: a small file
// system can be mounted in a mount namespace of the script's own
// (unshare -rm), for a disk that fills, and [e2e]: the slow
// end-to-end runs are on (LIZA_E2E=1, as .ci/run sets it); a script that
// is one starts with [!e2e] skip.
func scriptCondition(cond string) (bool, error) {
	if cond == "root" {
		return os.Geteuid() == 0, nil
	}
	if cond == "e2e" {
		return os.Getenv(e2eEnv) == "1", nil
	}
	if cond == "tmpfs" {
		return canMountTmpfs(), nil
	}
	if p, ok := strings.CutPrefix(cond, "exists:"); ok {
		_, err := os.Stat(p)
		return err == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// canMountTmpfs reports whether unshare -rm can mount a tmpfs here (Linux
// with user namespaces, or root); looked at once.
var canMountTmpfs = sync.OnceValue(func() bool {
	dir, err := os.MkdirTemp("", "liza-tmpfs")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	return exec.Command("unshare", "-rm", "mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).Run() == nil
})

// cmdRepo makes a repository in DIR (default: the current directory) with
// one commit holding specs/vision.md, as a project starting Liza has.
func cmdRepo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: repo [DIR]")
	}
	dir := ts.MkAbs(".")
	if len(args) == 1 {
		dir = ts.MkAbs(args[0])
	}
	ts.Check(os.MkdirAll(filepath.Join(dir, "specs"), 0o755))
	ts.Check(os.WriteFile(filepath.Join(dir, "specs", "vision.md"), []byte("# Vision\n\n## Retry\nRetry every API call.\n"), 0o644))
	for _, a := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "specs"},
		{"commit", "-q", "-m", "vision"},
	} {
		ts.Check(ts.Exec("git", append([]string{"-C", dir}, a...)...))
	}
}

// cmdExits runs a program like exec and checks its exit code: exits N PROG
// ARGS... Its stdout and stderr are kept for the stdout and stderr commands.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// cmdFreePort sets the environment variable VAR to a TCP port on 127.0.0.1
// that is free now: freeport VAR.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := l.Addr().(*net.TCPAddr).Port
	ts.Check(l.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}

// cmdBlackhole listens on a TCP port of 127.0.0.1 for the rest of the
// script, accepting every connection and never reading or writing (a
// server that hangs, a connection a network change left half open), and
// sets VAR to its host:port: blackhole VAR.
func cmdBlackhole(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: blackhole VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	ts.Defer(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	ts.Setenv(args[0], l.Addr().String())
}

// cmdPushBoth pushes to the remotes "origin" (file://) and "daemon" (git
// daemon on loopback) of the current repository, which are the same bare
// repository: [!] pushboth REFSPEC... Both pushes must succeed, or with !
// both must be refused, each saying the same git-liza lines. The first
// push's stderr is kept for the stderr command.
func cmdPushBoth(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: [!] pushboth REFSPEC...")
	}
	var said []string
	var first string
	for _, remote := range []string{"origin", "daemon"} {
		err := ts.Exec("git", append([]string{"push", remote}, args...)...)
		if neg && err == nil {
			ts.Fatalf("push to %s succeeded, want it refused", remote)
		}
		if !neg && err != nil {
			ts.Fatalf("push to %s: %v\n%s", remote, err, ts.ReadFile("stderr"))
		}
		out := ts.ReadFile("stderr")
		if first == "" {
			first = out
		}
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "remote: git-liza:") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		said = append(said, strings.Join(lines, "\n"))
	}
	if said[0] != said[1] {
		ts.Fatalf("file:// and git daemon said different things:\n%s\n---\n%s", said[0], said[1])
	}
	ts.Check(ts.Exec("sh", "-c", `printf '%s' "$1" >&2`, "sh", first))
}

// cmdHTTPGit serves the repositories under DIR over git's smart HTTP
// protocol on 127.0.0.1 for the rest of the script, through git
// http-backend behind a small handler, and sets VAR to its base URL:
// httpgit VAR DIR. Three prefixes serve the same repositories:
// /open/NAME (anyone may push), /auth/NAME (HTTP basic authentication as
// ada:secret, 401 otherwise) and /ro/NAME (anyone may fetch; a push gets
// 403); /hang/NAME answers nothing, ever (a hung server); /stall/NAME
// and /cut/NAME send the first bytes of a fetch's pack, then nothing or
// the end (a link lost in the middle of a transfer). VAR_HOST is set to
// its host:port, for URLs with credentials.
func cmdHTTPGit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httpgit VAR DIR")
	}
	git, err := exec.LookPath("git")
	ts.Check(err)
	root := ts.MkAbs(args[1])
	backend := func(prefix, user string) http.Handler {
		env := []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}
		if user != "" {
			env = append(env, "REMOTE_USER="+user)
		}
		return &cgi.Handler{Path: git, Args: []string{"http-backend"}, Root: prefix, Env: env}
	}
	mux := http.NewServeMux()
	mux.Handle("/open/", backend("/open", "anyone"))
	auth := backend("/auth", "ada")
	mux.Handle("/auth/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ada" || p != "secret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		auth.ServeHTTP(w, r)
	}))
	ro := backend("/ro", "")
	mux.Handle("/ro/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack" {
			http.Error(w, "this remote is read-only", http.StatusForbidden)
			return
		}
		ro.ServeHTTP(w, r)
	}))
	hung := make(chan struct{})
	mux.Handle("/hang/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	// /stall/NAME answers a fetch's pack with its first stallAfter bytes
	// and then nothing (a link that dies in the middle of a transfer);
	// /cut/NAME with the same bytes and then the end of the response.
	// The handler says "cgi: copy error" when a stalled answer ends; the
	// stall is the point here, not a fault to log.
	quiet := log.New(io.Discard, "", 0)
	cutPack := func(prefix string, stalls bool) {
		h := backend(prefix, "")
		h.(*cgi.Handler).Logger = quiet
		mux.Handle(prefix+"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
				h.ServeHTTP(w, r)
				return
			}
			sw := &stallWriter{ResponseWriter: w, left: stallAfter}
			if stalls {
				sw.hung, sw.done = hung, r.Context().Done()
			}
			h.ServeHTTP(sw, r)
		}))
	}
	cutPack("/stall", true)
	cutPack("/cut", false)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ts.Defer(func() { close(hung) })
	go srv.Serve(l)
	ts.Defer(func() { srv.Close() })
	ts.Setenv(args[0], "http://"+l.Addr().String())
	ts.Setenv(args[0]+"_HOST", l.Addr().String())
}

// stallAfter is how many bytes of a fetch's answer /stall/ and /cut/
// send: git's index-pack has written part of the pack by then.
const stallAfter = 64 << 10

// stallWriter passes the first left bytes of a response on; past them it
// waits until hung or done is closed (nil: it drops the rest at once).
type stallWriter struct {
	http.ResponseWriter
	left       int
	hung, done <-chan struct{}
}

func (w *stallWriter) Write(p []byte) (int, error) {
	if w.left <= 0 {
		return 0, errors.New("stalled")
	}
	n := min(len(p), w.left)
	w.left -= n

	if _, err := w.ResponseWriter.Write(p[:n]); err != nil {
		return 0, err
	}
	if w.left > 0 {
		return len(p), nil
	}
	http.NewResponseController(w.ResponseWriter).Flush()
	if w.done != nil {
		select {
		case <-w.hung:
		case <-w.done:
		}
	}
	return 0, errors.New("stalled")
}

// cmdTmuxRun starts COMMAND in a detached tmux session of COLSxROWS on its
// own server (socket SOCK), with the script's environment, and stops that
// server when the script ends: tmuxrun SOCK COLS ROWS COMMAND.
func cmdTmuxRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: tmuxrun SOCK COLS ROWS COMMAND")
	}
	sock := ts.MkAbs(args[0])
	ts.Check(ts.Exec("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", args[1], "-y", args[2], args[3]))
	ts.Defer(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
}

// cmdWaitPane waits, up to 20 seconds, until the screen of the tmux
// session on SOCK matches REGEXP (multi-line): waitpane SOCK REGEXP. On a
// timeout it fails with the last screen.
func cmdWaitPane(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitpane SOCK REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	var screen []byte
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		screen, err = exec.Command("tmux", "-S", ts.MkAbs(args[0]), "capture-pane", "-p").Output()
		if err == nil && re.Match(screen) {
			return
		}
	}
	ts.Fatalf("the screen never matched %s; it shows:\n%s", args[1], screen)
}

// cmdSignal runs PROG with ARGS in the current directory, sends it signal
// SIG (INT, TERM) after DELAY, and checks that it then exits within 10
// seconds with exit code CODE (128 plus the signal's number when the
// signal killed it): signal SIG DELAY CODE PROG ARGS... Its stdout and
// stderr are kept for the stdout and stderr commands.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: signal INT|TERM DELAY CODE PROG [ARGS...]")
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM}[args[0]]
	if sig == 0 {
		ts.Fatalf("signal: unknown signal %q", args[0])
	}
	delay, err := time.ParseDuration(args[1])
	ts.Check(err)
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	// The script's environment, as exec has it.
	ts.Check(ts.Exec("env", "-0"))
	env := strings.Split(strings.TrimSuffix(ts.ReadFile("stdout"), "\x00"), "\x00")
	prog := args[3]
	if !strings.Contains(prog, "/") {
		for _, kv := range env {
			if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
				for _, d := range filepath.SplitList(dirs) {
					if fi, err := os.Stat(filepath.Join(d, prog)); err == nil && !fi.IsDir() {
						prog = filepath.Join(d, prog)
						break
					}
				}
			}
		}
	}
	cmd := exec.Command(prog, args[4:]...)
	cmd.Dir, cmd.Env = ts.MkAbs("."), env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ts.Check(cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ts.Fatalf("%s exited before the signal (%v)\n%s", args[3], err, stderr.String())
	case <-time.After(delay):
	}
	ts.Check(cmd.Process.Signal(sig))
	var got int
	select {
	case <-done:
		got = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			got = 128 + int(ws.Signal())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		ts.Fatalf("%s did not exit within 10s of SIG%s\n%s", args[3], args[0], stderr.String())
	}
	ts.Check(ts.Exec("sh", "-c", `printf '%s' "$1"; printf '%s' "$2" >&2`, "sh", stdout.String(), stderr.String()))
	if got != want {
		ts.Fatalf("exit code %d after SIG%s, want %d", got, args[0], want)
	}
}

// cmdStrays checks that no process is left running in DIR or below it
// (its working directory there): strays DIR. It waits up to 3 seconds for
// those ending to go; the ones still there are named, killed, and fail
// the script. Linux only (it reads /proc); elsewhere it checks nothing.
func cmdStrays(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: strays DIR")
	}
	if _, err := os.Stat("/proc/self/cwd"); err != nil {
		return
	}
	dir, err := filepath.EvalSymlinks(ts.MkAbs(args[0]))
	ts.Check(err)
	find := func() map[int]string {
		found := map[int]string{}
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			pid, _ := strconv.Atoi(filepath.Base(p))
			cwd, err := os.Readlink(p + "/cwd")
			if err != nil || pid == os.Getpid() || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
				continue
			}
			stat, err := os.ReadFile(p + "/stat")
			if i := bytes.LastIndexByte(stat, ')'); err != nil || i < 0 || bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
				continue // gone, or a zombie
			}
			line, _ := os.ReadFile(p + "/cmdline")
			found[pid] = strings.TrimSpace(strings.ReplaceAll(string(line), "\x00", " "))
		}
		return found
	}
	var left map[int]string
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if left = find(); len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	var names []string
	for pid, line := range left {
		names = append(names, fmt.Sprintf("%d %s", pid, line))
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
	ts.Fatalf("processes left running in %s:\n%s", args[0], strings.Join(names, "\n"))
}
