package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// soakResult is a team of scripted agents left to work a long board (git
// liza run, as the team runs do): the rate of merges over each tenth of
// the tasks, what the team's log says went wrong on the way (merges that
// failed and were tried again, repairs of what a process left), and each
// supervisor's open files and resident memory at its first and last look.
// A team left running must keep its rate and leave its log quiet, and its
// supervisors must not grow.
type soakResult struct {
	Tasks   int     `json:"tasks"`
	Coders  int     `json:"coders"`
	Seconds float64 `json:"seconds"`
	// Rates are merges per minute over each tenth of the tasks.
	Rates        []float64    `json:"merged_per_min_by_tenth"`
	FailedMerges int          `json:"failed_merges"`
	Repairs      int          `json:"repairs"`
	Examples     []string     `json:"examples,omitempty"` // the first lines of each kind
	Supervisors  []soakSample `json:"supervisors"`
	Kills        *soakKills   `json:"kills,omitempty"`
}

// soakSample is one supervisor's first and last look.
type soakSample struct {
	Agent string `json:"agent"`
	FDs   int    `json:"fds_first"`
	FDs1  int    `json:"fds_last"`
	RSS   int    `json:"rss_kb_first"`
	RSS1  int    `json:"rss_kb_last"`
	Maps  int    `json:"mappings_first"`
	Maps1 int    `json:"mappings_last"`
	Looks int    `json:"looks"`
}

// soakLines are the log lines that say something went wrong on the way.
var (
	soakFailed = regexp.MustCompile(`\] \S+ merge \S+ failed`)
	soakRepair = regexp.MustCompile(`\] \S+ git-liza: (removed|emptied|repaired|unlocked|forgot) `)
)

// measureSoak runs the soak: -soak-tasks tasks, -soak-coders coders and one
// reviewer, a test that passes at once.
func (b *bench) measureSoak() (soakResult, error) {
	r := soakResult{Tasks: b.opt.soakTasks, Coders: b.opt.soakCoders}
	dir := filepath.Join(b.tmp, "soak")
	start := time.Now()
	tenths := make([]time.Time, 0, 10)
	sups := map[int]*soakSample{}
	var looked time.Time
	var kl *killer
	setup := teamSetup{test: "#!/bin/sh\nexit 0\n"}
	if b.opt.soakKill > 0 {
		r.Kills = &soakKills{Every: b.opt.soakKill.String(), Killed: map[string]int{}}
		kl = &killer{every: b.opt.soakKill, next: time.Now().Add(b.opt.soakKill), k: r.Kills, supervisors: map[string][]time.Time{}}
		setup.agent = soakAgent
	}
	setup.watch = func(team *exec.Cmd, merged int) {
		kl.look(team.Process.Pid)
		for len(tenths) < 10 && merged*10 >= (len(tenths)+1)*r.Tasks {
			tenths = append(tenths, time.Now())
		}
		if time.Since(looked) < 2*time.Second {
			return
		}
		looked = time.Now()
		for _, pid := range childrenOf(team.Process.Pid) {
			l, ok := procLook(pid)
			if !ok || l.agent == "" {
				continue // not a supervisor
			}
			s := sups[pid]
			if s == nil {
				s = &soakSample{Agent: l.agent, FDs: l.fds, RSS: l.rss, Maps: l.maps}
				sups[pid] = s
			}
			s.FDs1, s.RSS1, s.Maps1, s.Looks = l.fds, l.rss, l.maps, s.Looks+1
		}
	}
	if _, err := b.measureTeamWith(dir, r.Coders, r.Tasks, 0, setup); err != nil {
		return r, err
	}
	r.Seconds = time.Since(start).Seconds()
	prev := start
	for i, at := range tenths {
		n := (i+1)*r.Tasks/10 - i*r.Tasks/10
		r.Rates = append(r.Rates, float64(n)/at.Sub(prev).Minutes())
		prev = at
	}
	for _, s := range sups {
		r.Supervisors = append(r.Supervisors, *s)
	}
	slices.SortFunc(r.Supervisors, func(a, b soakSample) int { return strings.Compare(a.Agent, b.Agent) })
	log, err := os.ReadFile(filepath.Join(dir, "team.log"))
	if err != nil {
		return r, err
	}
	if r.Kills != nil {
		r.Kills.after(b, filepath.Join(dir, "repo"), string(log))
	}
	seen := map[*regexp.Regexp]bool{}
	for _, line := range strings.Split(string(log), "\n") {
		for _, re := range []*regexp.Regexp{soakFailed, soakRepair} {
			if !re.MatchString(line) {
				continue
			}
			if re == soakFailed {
				r.FailedMerges++
			} else {
				r.Repairs++
			}
			if !seen[re] {
				seen[re] = true
				r.Examples = append(r.Examples, line)
			}
		}
	}
	return r, nil
}

// childrenOf are the pids of pid's children, whichever of its threads
// started them (Linux; none elsewhere).
func childrenOf(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// look is what procLook sees of a process.
type look struct {
	agent          string
	fds, rss, maps int
}

// procLook is a supervisor's open files, resident KB and memory mappings,
// and the agent it supervises (from its command line), from /proc.
func procLook(pid int) (look, bool) {
	var l look
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return l, false
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	for i, a := range args {
		if a == "--agent" && i+1 < len(args) {
			l.agent = args[i+1]
		}
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return l, false
	}
	l.fds = len(ents)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return l, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, found := strings.CutPrefix(line, "VmRSS:"); found {
			l.rss, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	if maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid)); err == nil {
		l.maps = strings.Count(string(maps), "\n")
	}
	return l, true
}

func printSoak(r *soakResult) {
	if r == nil {
		return
	}
	fmt.Printf("\nSoak: a team of %d coders and 1 reviewer (git liza run, scripted agents) merges %d tasks, %.0f s\n", r.Coders, r.Tasks, r.Seconds)
	fmt.Printf("  merged/min over each tenth of the tasks:")
	for _, x := range r.Rates {
		fmt.Printf(" %.0f", x)
	}
	fmt.Printf("\n  merges that failed and were tried again: %d; repairs of what a process left: %d\n", r.FailedMerges, r.Repairs)
	for _, e := range r.Examples {
		fmt.Printf("    e.g. %s\n", e)
	}
	printKills(r.Kills)
	for _, s := range r.Supervisors {
		fmt.Printf("  supervisor %-16s open files %d -> %d, resident %d -> %d KB, memory mappings %d -> %d (%d looks)\n", s.Agent, s.FDs, s.FDs1, s.RSS, s.RSS1, s.Maps, s.Maps1, s.Looks)
	}
}
