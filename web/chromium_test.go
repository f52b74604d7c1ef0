package web

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/liza-dev/git-liza/ops"
)

// chromium is the browser the test drives: $LIZA_CHROMIUM, else Debian's
// chromium on PATH.
func chromium(t *testing.T) string {
	if p := os.Getenv("LIZA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed: the web board is tested in a headless Chromium (.ci/run installs Debian's package as root)")
	return ""
}

// The web board in a real browser, through the DevTools protocol: the page
// loads and connects to the events stream; a lever without the token is
// refused and changes nothing; a move of the state redraws the page
// without a reload; opened once with ?token=, the page pulls a lever that
// lands in the log as the operator's and shows the PAUSED banner; on a
// phone's width the board is one column that does not scroll sideways.
// WEB_SCREENSHOTS=DIR saves web-desktop.png and web-phone.png there.
func TestChromium(t *testing.T) {
	exe := chromium(t)
	b := newBoard(t, Options{})
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "chromium")),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses root otherwise
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	wait := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("waiting for %s (%s): %v", what, expr, err)
		}
	}

	// A task whose title an agent wrote to run in the browser, and that
	// waits on a.
	c := ops.AddTaskRequest{}
	c.Task.ID, c.Task.SpecRef, c.Task.DoneWhen, c.Task.Scope, c.Task.Priority = "c", "specs/vision.md", "c.txt exists", "IN: c.txt", 2
	c.Task.Description = "Retry POST calls <script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">\x1b[31m"
	c.Task.DependsOn, c.Task.Status = []string{"a"}, "UNCLAIMED"
	if _, err := b.human.AddTask(context.Background(), c); err != nil {
		t.Fatal(err)
	}

	// The board loads without the token and joins the events stream.
	run("open the board", chromedp.Navigate(b.ts.URL+"/"), chromedp.WaitVisible("#counts"))
	wait("the events stream", `document.getElementById("live").className === "on"`)
	if got := text("#counts"); !strings.Contains(got, "CLAIMED 1") || !strings.Contains(got, "UNCLAIMED 2") {
		t.Fatalf("counts %q", got)
	}
	if got := text("#task-c"); !strings.Contains(got, "waits on a") || !strings.Contains(got, `<script>window.__pwned = 1</script>`) || !strings.Contains(got, `\x1b[31m`) {
		t.Errorf("task c reads %q: want its title as text, escapes spelled, and that it waits on a", got)
	}
	if clean, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__pwned === undefined`)); err != nil || !clean {
		t.Fatalf("an agent's title ran in the page (%v)", err)
	}

	// A lever from a page opened without the token is refused.
	before := b.lastOp(t)
	run("pause without the token", chromedp.Click("#pause"))
	wait("the refusal", `document.getElementById("result").textContent.includes("need the board's token")`)
	if got := b.lastOp(t); got.Commit != before.Commit {
		t.Fatalf("a lever without the token landed: %s", got.Subject)
	}

	// Another process moves the state: the page redraws by itself, without
	// a reload (the mark set on this window survives).
	run("mark the window", chromedp.Evaluate[chromedp.Void](`window.__sameWindow = true`))
	moved := time.Now()
	if _, err := b.human.As("coder-1", 0).Block(context.Background(), ops.BlockRequest{Task: "a", Reason: "the spec is silent", Questions: []string{"How many retries?"}}); err != nil {
		t.Fatal(err)
	}
	wait("the redraw", `document.getElementById("counts").textContent.includes("BLOCKED 1")`)
	t.Logf("the page showed the move %v after it", time.Since(moved).Round(time.Millisecond))
	if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__sameWindow === true`)); err != nil || !same {
		t.Fatalf("the page was reloaded, not redrawn (%v)", err)
	}

	// Opened once with the token, the page pulls a lever: it lands as the
	// operator's pause, and the banner shows.
	run("open with the token", chromedp.Navigate(b.ts.URL+"/?token="+testToken), chromedp.WaitVisible("#counts"))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); strings.Contains(loc, "token") {
		t.Errorf("the token stays in the address: %s", loc)
	}
	wait("the events stream", `document.getElementById("live").className === "on"`)
	run("pause with the token", chromedp.SendKeys(`form[action="/lever/pause"] input[name=reason]`, "lunch"), chromedp.Click("#pause"))
	wait("the pause", `document.getElementById("result").textContent.startsWith("PAUSED by")`)
	if got := b.lastOp(t); got.Op != "pause" || got.Agent != "human" || !strings.Contains(got.Subject, "pause") {
		t.Fatalf("the last operation is %q by %q (%s), want the operator's pause", got.Op, got.Agent, got.Subject)
	}
	// The banner says why. Read in the page, in one poll: the events
	// stream may redraw the board between a wait and a read of the node
	// the wait saw (CI once read "" that way).
	wait("the banner, saying why", `(document.getElementById("banner") || {textContent: ""}).textContent.includes("PAUSED") &&
		document.getElementById("banner").textContent.includes("lunch")`)
	shots := os.Getenv("WEB_SCREENSHOTS")
	if shots != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, "web-desktop.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A phone's width: one column, nothing wider than the screen.
	run("a phone's width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(b.ts.URL+"/"), chromedp.WaitVisible("#counts"))
	layout, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("main.board")).display + " " + (document.documentElement.scrollWidth <= window.innerWidth)`))
	if err != nil || layout != "block true" {
		t.Errorf("on a phone the board lays out as %q (want one column, no sideways scroll): %v", layout, err)
	}
	if shots != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, "web-phone.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{"/task/a", "/task/c", "/log", "/alarms"} {
		run("open "+path, chromedp.Navigate(b.ts.URL+path), chromedp.WaitVisible("main"))
		if fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`)); err != nil || !fits {
			t.Errorf("%s is wider than a phone (%v)", path, err)
		}
	}
}
