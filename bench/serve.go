package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serveResult is what the web board (git liza serve) costs and how many
// pages it keeps up to date: its memory and processor time idle, with
// Pages pages open on its events stream, and while a team of scripted
// agents works the board those pages watch; and, over Rounds moves of the
// board made by git liza note, how long after the note started every
// page had the event, and had fetched the page again (what the page's
// script does on the event).
type serveResult struct {
	Pages  int `json:"pages"`
	Rounds int `json:"rounds"`
	// IdleRSS: the server alone; PagesRSS: with the pages open;
	// TeamRSS: the most it held while the team ran (VmHWM).
	IdleRSSKB  int `json:"idle_rss_kb"`
	PagesRSSKB int `json:"pages_rss_kb"`
	TeamRSSKB  int `json:"team_peak_rss_kb"`
	// CPU shares of one processor over a quiet interval, and over the
	// team's run.
	IdleCPU  float64 `json:"idle_cpu"`
	PagesCPU float64 `json:"pages_cpu"`
	TeamCPU  float64 `json:"team_cpu"`
	// TeamMoves is how many moves of the board the pages heard of while
	// the team ran (each page, the fewest), TeamSeconds how long it ran.
	TeamMoves   int     `json:"team_moves_heard"`
	TeamSeconds float64 `json:"team_seconds"`
	// PagesTeamCPU is what the pages themselves (HTTP clients in the
	// bench's process, where browsers would be on other machines) used
	// of a processor while the team ran.
	PagesTeamCPU float64 `json:"pages_team_cpu"`
	// TeamPerMin is the team's merges per minute with the board and its
	// pages watching; AlonePerMin the same team's without them, run
	// right after.
	TeamPerMin  float64 `json:"team_merged_per_min"`
	AlonePerMin float64 `json:"alone_merged_per_min"`
	// Event: ms from the start of git liza note to the last page's event;
	// Redraw: to the last page's fetch of the board done.
	Event     stats   `json:"event_ms"`
	Redraw    stats   `json:"redraw_ms"`
	EventMax  float64 `json:"event_max_ms"`
	RedrawMax float64 `json:"redraw_max_ms"`
	// Late counts the rounds where some page took a second or more.
	Late int `json:"late_rounds"`
}

// serveTeamHook, when set, runs around a team's run of measureTeam: it
// is called with the repository before the team starts, and what it
// returns once the team is done.
type serveTeamHook func(repo string) func()

// measureServe builds git-liza-serve, serves a board of 20 tasks with
// opt.servePages pages open, and measures.
func (b *bench) measureServe(root string) (serveResult, error) {
	r := serveResult{Pages: b.opt.servePages, Rounds: b.opt.runs}
	server := filepath.Join(b.bin, "git-liza-serve")
	if _, err := output(root, nil, "go", "build", "-o", server, "./git-liza-serve"); err != nil {
		return r, err
	}
	dir := filepath.Join(b.tmp, "serve")
	repo := filepath.Join(dir, "repo")
	if err := b.initRepo(repo); err != nil {
		return r, err
	}
	head, err := output(repo, b.env, "git", "rev-parse", "HEAD")
	if err != nil {
		return r, err
	}
	seed := filepath.Join(dir, "seed.yaml")
	if err := os.WriteFile(seed, []byte(teamSeed(20, 0, head)), 0o644); err != nil {
		return r, err
	}
	if out, err := command(repo, b.env, b.gitLiza, "import", seed).CombinedOutput(); err != nil {
		return r, fmt.Errorf("import: %v\n%s", err, out)
	}
	srv, err := startServe(server, repo, b.env)
	if err != nil {
		return r, err
	}
	defer srv.stop()

	progress("serve: idle, no page open")
	r.IdleRSSKB, r.IdleCPU = srv.quiet(5 * time.Second)
	pages, err := openPages(srv.url, r.Pages)
	if err != nil {
		return r, err
	}
	defer pages.close()
	progress(fmt.Sprintf("serve: idle, %d pages open", r.Pages))
	r.PagesRSSKB, r.PagesCPU = srv.quiet(5 * time.Second)

	progress(fmt.Sprintf("serve: %d moves of the board, %d pages", r.Rounds, r.Pages))
	var ev, rd []float64
	for i := range r.Rounds {
		// A move each time the pages may redraw again: each round times
		// one move, not the redraws' spacing.
		time.Sleep(redrawGap)
		start := time.Now()
		if _, err := output(repo, b.env, b.gitLiza, "note", fmt.Sprintf("round %d", i+1)); err != nil {
			return r, err
		}
		tip, err := output(repo, b.env, "git", "rev-parse", "refs/liza/state")
		if err != nil {
			return r, err
		}
		heard, fetched, err := pages.wait(tip, 10*time.Second)
		if err != nil {
			return r, err
		}
		e, d := heard.Sub(start), fetched.Sub(start)
		ev, rd = append(ev, millis(e)), append(rd, millis(d))
		if d >= time.Second {
			r.Late++
		}
	}
	r.Event, r.Redraw = summarize(ev), summarize(rd)
	r.EventMax, r.RedrawMax = slices.Max(ev), slices.Max(rd)
	pages.close()
	srv.stop()

	// The same server and pages on a board a team works.
	progress(fmt.Sprintf("serve: a team of 2 coders and a reviewer on 20 tasks, %d pages watching", r.Pages))
	b.serveHook = func(repo string) func() {
		srv, err := startServe(server, repo, b.env)
		if err != nil {
			progress("serve: " + err.Error())
			return func() {}
		}
		pages, err := openPages(srv.url, r.Pages)
		if err != nil {
			progress("serve: " + err.Error())
			srv.stop()
			return func() {}
		}
		cpu0, start, self0 := srv.cpu(), time.Now(), selfCPU()
		return func() {
			r.TeamSeconds = time.Since(start).Seconds()
			r.PagesTeamCPU = (selfCPU() - self0).Seconds() / r.TeamSeconds
			r.TeamCPU = (srv.cpu() - cpu0).Seconds() / r.TeamSeconds
			r.TeamRSSKB = srv.status("VmHWM")
			r.TeamMoves = pages.fewest()
			pages.close()
			srv.stop()
		}
	}
	watched, err := b.measureTeam(filepath.Join(dir, "team"), 2, 20, 0)
	b.serveHook = nil
	if err != nil {
		return r, err
	}
	alone, err := b.measureTeam(filepath.Join(dir, "team-alone"), 2, 20, 0)
	if err != nil {
		return r, err
	}
	r.TeamPerMin, r.AlonePerMin = watched.PerMin, alone.PerMin
	return r, nil
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// served is a running git-liza-serve.
type served struct {
	cmd *exec.Cmd
	url string
}

// startServe starts the server on a free port of 127.0.0.1 in repo, and
// waits for the line that says where it listens.
func startServe(server, repo string, env []string) (*served, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := command(repo, env, server, "--addr", addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("git-liza-serve said nothing: %v", err)
	}
	go io.Copy(io.Discard, out)
	if !strings.Contains(line, addr) {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("git-liza-serve: %s", line)
	}
	return &served{cmd: cmd, url: "http://" + addr}, nil
}

func (s *served) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
}

// cpu is the server's processor time so far (from /proc).
func (s *served) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which ends with ')'.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// status is a kB field of /proc/PID/status (VmRSS, VmHWM).
func (s *served) status(field string) int {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// quiet is the server's resident memory after d, and the share of a
// processor it used meanwhile.
func (s *served) quiet(d time.Duration) (int, float64) {
	c0 := s.cpu()
	time.Sleep(d)
	return s.status("VmRSS"), (s.cpu() - c0).Seconds() / d.Seconds()
}

// pageSet is n browsers' pages, each on the events stream; on each event
// a page fetches the board again, as the page's script does.
type pageSet struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	cond   *sync.Cond
	event  []map[string]time.Time // per page: tip -> when heard
	redraw []map[string]time.Time // per page: tip -> when fetched
}

// redrawGap is the least time between two redraws of a page (gap in the
// page's script, web/static/app.js).
const redrawGap = 250 * time.Millisecond

func openPages(url string, n int) (*pageSet, error) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pageSet{cancel: cancel}
	p.cond = sync.NewCond(&p.mu)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * n, MaxConnsPerHost: 0}}
	ready := make(chan error, n)
	for i := range n {
		p.event = append(p.event, map[string]time.Time{})
		p.redraw = append(p.redraw, map[string]time.Time{})
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", url+"/events", nil)
			res, err := client.Do(req)
			if err == nil && res.StatusCode != 200 {
				err = fmt.Errorf("events: %s", res.Status)
			}
			ready <- err
			if err != nil {
				return
			}
			defer res.Body.Close()
			var last time.Time
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				tip, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				p.mark(p.event[i], tip)
				// As the page's script does: at most one redraw every
				// redrawGap, the latest board each time.
				time.Sleep(time.Until(last.Add(redrawGap)))
				last = time.Now()
				req, _ := http.NewRequestWithContext(ctx, "GET", url+"/", nil)
				if page, err := client.Do(req); err == nil {
					io.Copy(io.Discard, page.Body)
					page.Body.Close()
					p.mark(p.redraw[i], tip)
				}
			}
		}()
	}
	for range n {
		if err := <-ready; err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

func (p *pageSet) mark(m map[string]time.Time, tip string) {
	p.mu.Lock()
	m[tip] = time.Now()
	p.mu.Unlock()
	p.cond.Broadcast()
}

// wait is when the last page heard of tip and when the last one had
// fetched the board after it.
func (p *pageSet) wait(tip string, limit time.Duration) (time.Time, time.Time, error) {
	timer := time.AfterFunc(limit, p.cond.Broadcast)
	defer timer.Stop()
	deadline := time.Now().Add(limit)
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		var ev, rd time.Time
		all := true
		for i := range p.event {
			e, ok1 := p.event[i][tip]
			d, ok2 := p.redraw[i][tip]
			if !ok1 || !ok2 {
				all = false
				break
			}
			ev, rd = maxTime(ev, e), maxTime(rd, d)
		}
		if all {
			return ev, rd, nil
		}
		if time.Now().After(deadline) {
			return ev, rd, fmt.Errorf("not every page heard of %s within %s", tip[:12], limit)
		}
		p.cond.Wait()
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// fewest is the fewest moves a page heard of.
func (p *pageSet) fewest() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n []int
	for _, m := range p.event {
		n = append(n, len(m))
	}
	if len(n) == 0 {
		return 0
	}
	return slices.Min(n)
}

func (p *pageSet) close() {
	p.cancel()
	p.wg.Wait()
}

func printServe(r *serveResult) {
	if r == nil {
		return
	}
	fmt.Printf("\nWeb board (git liza serve), %d pages on its events stream, %d moves by git liza note\n", r.Pages, r.Rounds)
	fmt.Printf("  idle, no page:    %6d kB resident, %5.2f%% of a processor\n", r.IdleRSSKB, 100*r.IdleCPU)
	fmt.Printf("  idle, %3d pages:  %6d kB resident, %5.2f%% of a processor\n", r.Pages, r.PagesRSSKB, 100*r.PagesCPU)
	fmt.Printf("  a team at work:   %6d kB at most,  %5.2f%% of a processor over %.1f s; each page heard %d moves\n", r.TeamRSSKB, 100*r.TeamCPU, r.TeamSeconds, r.TeamMoves)
	fmt.Printf("  the %d pages themselves (HTTP clients in this process): %.2f%% of a processor while the team ran\n", r.Pages, 100*r.PagesTeamCPU)
	fmt.Printf("  the team merged %.0f tasks/min watched, %.0f/min with no board served (one run each)\n", r.TeamPerMin, r.AlonePerMin)
	fmt.Printf("  every page's event after the note started: median %.1f ms, p90 %.1f ms, max %.1f ms\n", r.Event.Median, r.Event.P90, r.EventMax)
	fmt.Printf("  every page redrawn (board fetched again):  median %.1f ms, p90 %.1f ms, max %.1f ms; rounds of a second or more: %d\n", r.Redraw.Median, r.Redraw.P90, r.RedrawMax, r.Late)
}
