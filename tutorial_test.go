//go:build unix

package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tutorial cannot rot: TestTutorial runs the steps of docs/tutorial.md
// in order, with a scripted agent in place of the real CLI, and checks what
// the page says happens. The page marks them:
//
//	```sh               a step: run in the tutorial's shell; it must exit 0
//	```sh background    a command the reader starts in another terminal
//	```sh notest        not run here (installing, credentials, full-screen views)
//	<!-- tutorial: wait ID STATUS -->   the reader waits until task ID is STATUS
//	<!-- tutorial: sh COMMAND -->       an outcome the page promises: COMMAND must exit 0
//	<!-- tutorial: background-exit -->  the background commands end, each with exit 0

const tutorialPage = "docs/tutorial.md"

type tutorialStep struct {
	kind string // sh, background, wait, check, background-exit
	text string
	line int
}

func parseTutorial(t *testing.T, path string) []tutorialStep {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []tutorialStep
	var block *tutorialStep
	var body []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case block != nil && line == "```":
			if block.kind != "notest" {
				block.text = strings.Join(body, "\n") + "\n"
				steps = append(steps, *block)
			}
			block, body = nil, nil
		case block != nil:
			body = append(body, line)
		case strings.HasPrefix(line, "```sh"):
			kind := strings.TrimSpace(strings.TrimPrefix(line, "```sh"))
			switch kind {
			case "":
				kind = "sh"
			case "background", "notest":
			default:
				t.Fatalf("%s:%d: unknown block marker %q", path, n, kind)
			}
			block = &tutorialStep{kind: kind, line: n}
		case strings.HasPrefix(line, "<!-- tutorial: "):
			d := strings.TrimSuffix(strings.TrimPrefix(line, "<!-- tutorial: "), " -->")
			verb, arg, _ := strings.Cut(d, " ")
			switch verb {
			case "wait", "background-exit":
			case "sh":
				verb = "check"
			default:
				t.Fatalf("%s:%d: unknown directive %q", path, n, d)
			}
			steps = append(steps, tutorialStep{kind: verb, text: arg, line: n})
		}
	}
	if block != nil {
		t.Fatalf("%s:%d: a block is not closed", path, block.line)
	}
	return steps
}

func TestTutorial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-liza and runs the tutorial's team")
	}
	steps := parseTutorial(t, tutorialPage)
	count := map[string]int{}
	for _, s := range steps {
		count[s.kind]++
	}
	// A page whose markers went missing must not pass by running nothing.
	if count["sh"] < 10 || count["background"] != 2 || count["wait"] < 4 || count["check"] < 2 || count["background-exit"] != 1 {
		t.Fatalf("%s: steps by kind %v: fewer than the tutorial has", tutorialPage, count)
	}
	agent, err := filepath.Abs("testdata/tutorial/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	work, _ := filepath.EvalSymlinks(t.TempDir())
	bin := tutorialBinary(t, work)
	t.Logf("git-liza: %s", bin)
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "GIT_") && !strings.HasPrefix(k, "LIZA_") && k != "HOME" && k != "PATH" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com",
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))

	// What the reader's terminals printed, for a failure's message.
	var mu sync.Mutex
	var log strings.Builder
	logf := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&log, format, a...)
	}
	fail := func(format string, a ...any) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%s\n--- what the tutorial's terminals printed:\n%s", fmt.Sprintf(format, a...), log.String())
	}

	cwd := work
	pwdFile := filepath.Join(work, ".pwd")
	substituted := 0
	// The scripted agent replaces the real CLI. A supervisor also looks for
	// work every 200 ms rather than at the board's poll interval (30 s): a
	// claim refused in the instant a merge has moved the board but not yet
	// the integration branch is tried again at the next look.
	script := func(text string, supervisor bool) string {
		substituted += strings.Count(text, "--cli claude")
		with := "-- sh '" + agent + "'"
		if supervisor {
			with = "--poll 200ms " + with
		}
		return strings.ReplaceAll(text, "--cli claude", with)
	}
	sh := func(text string) (string, error) {
		c := exec.Command("bash", "-e", "-c", text+"\npwd >'"+pwdFile+"'\n")
		c.Dir, c.Env = cwd, env
		out, err := c.CombinedOutput()
		if b, rerr := os.ReadFile(pwdFile); rerr == nil {
			cwd = strings.TrimSpace(string(b))
		}
		return string(out), err
	}
	type bg struct {
		cmd    *exec.Cmd
		line   int
		done   chan error // its Wait's result, once
		exited bool       // done was read
	}
	var bgs []*bg
	// A failed step leaves the team running: stop it as Ctrl-C would, so
	// that its supervisors clean up before the directory goes.
	t.Cleanup(func() {
		for _, b := range bgs {
			if b.exited {
				continue
			}
			syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-b.done:
			case <-time.After(30 * time.Second):
				syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
				<-b.done
			}
		}
	})
	status := func(id string) string {
		c := exec.Command("git-liza", "show", id, "--json")
		c.Dir, c.Env = cwd, env
		out, err := c.Output()
		if err != nil {
			return "(" + err.Error() + ")"
		}
		var task struct{ Status string }
		if json.Unmarshal(out, &task) != nil {
			return "(unreadable)"
		}
		return task.Status
	}

	start := time.Now()
	for _, s := range steps {
		switch s.kind {
		case "sh":
			logf("$ %s:%d\n%s", tutorialPage, s.line, s.text)
			out, err := sh(script(s.text, false))
			logf("%s", out)
			if err != nil {
				fail("%s:%d: the step failed: %v", tutorialPage, s.line, err)
			}
		case "background":
			logf("$ %s:%d (in another terminal)\n%s", tutorialPage, s.line, s.text)
			c := exec.Command("bash", "-e", "-c", script(s.text, true))
			c.Dir, c.Env = cwd, env
			c.Stdout = writerFunc(func(p []byte) { logf("[terminal of line %d] %s", s.line, p) })
			c.Stderr = c.Stdout
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			b := &bg{cmd: c, line: s.line, done: make(chan error, 1)}
			go func() { b.done <- c.Wait() }()
			bgs = append(bgs, b)
		case "wait":
			id, want, _ := strings.Cut(s.text, " ")
			// The scripted team takes a few seconds; a minute means it is stuck.
			deadline := time.Now().Add(time.Minute)
			for got := status(id); got != want; got = status(id) {
				if time.Now().After(deadline) {
					fail("%s:%d: task %s is %s, and the tutorial waits for %s", tutorialPage, s.line, id, got, want)
				}
				time.Sleep(50 * time.Millisecond)
			}
			logf("(task %s is %s, %s after the start)\n", id, want, time.Since(start).Round(time.Millisecond))
		case "check":
			out, err := sh(s.text)
			if err != nil {
				fail("%s:%d: what the tutorial promises does not hold: %s: %v\n%s", tutorialPage, s.line, s.text, err, out)
			}
		case "background-exit":
			for _, b := range bgs {
				select {
				case err := <-b.done:
					b.exited = true
					if err != nil {
						fail("%s:%d: the command started at line %d ended with %v", tutorialPage, s.line, b.line, err)
					}
				case <-time.After(time.Minute):
					fail("%s:%d: the command started at line %d is still running", tutorialPage, s.line, b.line)
				}
			}
		}
	}
	if testing.Verbose() {
		t.Logf("what the tutorial's terminals printed:\n%s", log.String())
	}
	if substituted < 3 {
		t.Fatalf("the scripted agent replaced --cli claude %d times: the tutorial's team commands changed", substituted)
	}
}

// tutorialBinary is the git-liza the tutorial runs: this test binary, which
// TestMain (testscript.Main) put on PATH as git-liza, else one built now.
func tutorialBinary(t *testing.T, work string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := exec.LookPath("git-liza"); err == nil {
		a, errA := os.Stat(p)
		b, errB := os.Stat(self)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return p
		}
	}
	bin := filepath.Join(work, "bin", "git-liza")
	if out, err := exec.Command("go", "build", "-tags", "canoncheck", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// writerFunc is an io.Writer that hands each write to a function.
type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) {
	f(p)
	return len(p), nil
}
