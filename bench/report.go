package main

import (
	"fmt"
	"os"
	"text/tabwriter"
)

type stats struct {
	Median  float64   `json:"median_ms"`
	P90     float64   `json:"p90_ms"`
	Samples []float64 `json:"samples_ms"`
}

type sizeResult struct {
	Tasks         int      `json:"tasks"`
	Seed          stats    `json:"seed"`
	GitLiza       stats    `json:"git_liza"`
	GitLizaDirect stats    `json:"git_liza_direct"`
	Ratio         float64  `json:"ratio"`
	RatioDirect   float64  `json:"ratio_direct"`
	Goal          *float64 `json:"goal,omitempty"`
	Floor         *floor   `json:"floor,omitempty"`
	Compare       *stats   `json:"git_liza_compare,omitempty"` // git-liza built from -compare REV, run directly
	RatioCompare  float64  `json:"ratio_compare,omitempty"`    // GitLizaDirect's median to Compare's: this build over REV's
}

// floor is what any command run as `git liza` that moves a ref with git
// update-ref pays before doing anything: git's dispatch to a Go program
// that does nothing, and one update-ref process.
type floor struct {
	Dispatch  stats   `json:"dispatch"`   // git liza-floor: git, then an empty Go program
	UpdateRef stats   `json:"update_ref"` // git update-ref REF HEAD
	Median    float64 `json:"median_ms"`  // the sum of the two medians
	Ratio     float64 `json:"ratio"`      // Median to the baseline's median
}

type historyResult struct {
	Tasks        int     `json:"tasks"`
	ShortCommits int     `json:"short_commits"`
	LongCommits  int     `json:"long_commits"`
	Short        stats   `json:"short"`
	Long         stats   `json:"long"`
	Ratio        float64 `json:"ratio"`
	Goal         float64 `json:"goal"`
}

// soloResult is a command timed without a baseline.
type soloResult struct {
	Tasks   int    `json:"tasks"`
	Command string `json:"command"`
	Stats   stats  `json:"stats"`
}

// remoteResult is one task add in local mode and in remote mode over two
// transports, interleaved.
type remoteResult struct {
	Tasks       int     `json:"tasks"`
	Local       stats   `json:"local"`
	File        stats   `json:"file"`
	Daemon      stats   `json:"git_daemon"`
	RatioFile   float64 `json:"ratio_file"`
	RatioDaemon float64 `json:"ratio_git_daemon"`
}

// contentionResult is Clones clones adding AddsPerClone tasks each, all at
// once, through one file:// remote.
type contentionResult struct {
	Clones       int     `json:"clones"`
	AddsPerClone int     `json:"adds_per_clone"`
	WallMS       float64 `json:"wall_ms"`
	OpsPerSec    float64 `json:"ops_per_sec"`
	Add          stats   `json:"add"`           // each acknowledged add, whole process, retries included
	GaveUp       int     `json:"gave_up"`       // adds that spent the retry budget (exit 2): refused, not lost
	SetupCommits int     `json:"setup_commits"` // on the remote's refs/liza/state before the adds
	Commits      int     `json:"commits"`       // and after
	Lost         int     `json:"lost"`
}

type report struct {
	Go            string             `json:"go"`
	Git           string             `json:"git"`
	Yq            string             `json:"yq"`
	NumCPU        int                `json:"nproc"`
	Runs          int                `json:"runs"`
	Sizes         []sizeResult       `json:"sizes"`
	History       historyResult      `json:"history"`
	Claims        []sizeResult       `json:"claims"`
	ClaimWorktree soloResult         `json:"claim_worktree"`
	Merge         soloResult         `json:"merge"`
	Formats       *formatsResult     `json:"formats,omitempty"`
	Remote        *remoteResult      `json:"remote,omitempty"`
	Contention    []contentionResult `json:"contention,omitempty"`
	Trust         *trustResult       `json:"trust,omitempty"`
	BigPush       *bigpushResult     `json:"bigpush,omitempty"`
	Scale         *scaleResult       `json:"scale,omitempty"`
	Fairness      []fairResult       `json:"fairness,omitempty"`
	ClaimsFloor   []claimsResult     `json:"claims_floor,omitempty"`
	Hub           *hubResult         `json:"hub,omitempty"`
	Teams         []teamResult       `json:"teams,omitempty"`
	Queue         *queueResult       `json:"queue,omitempty"`
	Batch         *batchResult       `json:"batch,omitempty"`
	Collide       []collideRun       `json:"collide,omitempty"`
	Spend         *spendResult       `json:"spend,omitempty"`
	MCP           *mcpResult         `json:"mcp,omitempty"`
	Serve         *serveResult       `json:"serve,omitempty"`
	Soak          *soakResult        `json:"soak,omitempty"`
	Worktree      *worktreeResult    `json:"worktree,omitempty"`
	Compare       *compareInfo       `json:"compare,omitempty"`
}

// compareInfo is the revision -compare built git-liza from.
type compareInfo struct {
	Rev    string `json:"rev"`    // as given
	Commit string `json:"commit"` // the commit it named
}

func printTable(r report) {
	fmt.Printf("machine: %s; %s; nproc %d; %s\n", r.Go, r.Git, r.NumCPU, r.Yq)
	var rev string
	if c := r.Compare; c != nil {
		rev = c.Rev
		fmt.Printf("compare: git-liza@%s is git-liza built from %s (%.12s), run directly; ratio(this/%s) = this build / git-liza@%s, medians, each in a repository of its own made the same way\n",
			rev, rev, c.Commit, rev, rev)
	}
	if len(r.Sizes) > 0 {
		printBase(r, rev)
	}
	if r.Formats != nil {
		printFormats(r.Formats, r.Runs)
	}
	if m := r.Remote; m != nil {
		fmt.Printf("\nremote mode: git liza task add (%d tasks), whole process, median (p90) of %d runs, ms\n", m.Tasks, r.Runs)
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "local\tfile://\tgit daemon\tratio(file://)\tratio(git daemon)")
		fmt.Fprintf(w, "%s\t%s\t%s\t%.2f\t%.2f\n", ms(m.Local), ms(m.File), ms(m.Daemon), m.RatioFile, m.RatioDaemon)
		w.Flush()
	}
	if len(r.Contention) > 0 {
		fmt.Printf("\nclones contending on one file:// remote (%d tasks), %d adds per clone, all started at once\n", remoteTasks, contendAdds)
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "clones\tadds\twall ms\tops/s\tadd ms, median (p90)\tcommits (setup+adds)\tgave up\tlost")
		lost := 0
		for _, c := range r.Contention {
			fmt.Fprintf(w, "%d\t%d\t%.0f\t%.1f\t%s\t%d+%d\t%d\t%d\n", c.Clones, c.Clones*c.AddsPerClone, c.WallMS, c.OpsPerSec,
				ms(c.Add), c.SetupCommits, c.Commits-c.SetupCommits, c.GaveUp, c.Lost)
			lost += c.Lost
		}
		w.Flush()
		fmt.Printf("lost: %d (every acknowledged add is on the remote once, one commit each)\n", lost)
	}
	if r.Trust != nil {
		printTrust(r.Trust)
	}
	if r.BigPush != nil {
		printBigPush(r.BigPush)
	}
	printFairness(r.Fairness)
	printClaims(r.ClaimsFloor)
	printHub(r.Hub)
	printTeams(r.Teams)
	printBatch(r.Batch)
	printCollide(r.Collide)
	printQueue(r.Queue)
	printSpend(r.Spend)
	printMCP(r.MCP)
	printServe(r.Serve)
	printSoak(r.Soak)
	printWorktree(r.Worktree)
	if r.Scale != nil {
		printScale(r.Scale)
	}
}

// printBase prints the add and the claim against the baseline, history,
// a claim with its worktree and a merge.
func printBase(r report, rev string) {
	fmt.Println()
	fmt.Printf("task add, whole process, median (p90) of %d runs, ms\n", r.Runs)
	printRatios(r.Sizes, rev)
	fmt.Println()
	for _, s := range r.Sizes {
		if f := s.Floor; f != nil {
			fmt.Printf("floor at %d tasks: git liza-floor (an empty Go program) %s + git update-ref %s = %.1f ms, ratio %.3f\n",
				s.Tasks, ms(f.Dispatch), ms(f.UpdateRef), f.Median, f.Ratio)
		}
	}
	h := r.History
	fmt.Printf("\nhistory (%d tasks, git liza task add): %d commits %s ms, %d commits %s ms, ratio %.3f%s (goal <= %.1fx)\n",
		h.Tasks, h.ShortCommits, ms(h.Short), h.LongCommits, ms(h.Long), h.Ratio, verdict(h.Ratio <= h.Goal), h.Goal)

	fmt.Printf("\nclaim ID --no-worktree, whole process, median (p90) of %d runs, ms\n", r.Runs)
	printRatios(r.Claims, rev)
	fmt.Println()
	for _, s := range []soloResult{r.ClaimWorktree, r.Merge} {
		fmt.Printf("%s (%d tasks, no baseline): %s ms\n", s.Command, s.Tasks, ms(s.Stats))
	}

}

// printRatios prints a table of git-liza against the baseline, by number of
// tasks; and, when rev is not empty, against git-liza built from -compare rev.
func printRatios(rows []sizeResult, rev string) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	header := "tasks\tseed(flock+yq)\tgit liza\tgit-liza\tratio(git liza)\tratio(git-liza)\tgoal"
	if rev != "" {
		header += fmt.Sprintf("\tgit-liza@%s\tratio(this/%s)", rev, rev)
	}
	fmt.Fprintln(w, header)
	for _, s := range rows {
		goal, mark := "-", func(float64) string { return "" }
		if s.Goal != nil {
			goal = fmt.Sprintf("<= %.2f", *s.Goal)
			mark = func(x float64) string { return verdict(x <= *s.Goal) }
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%.3f%s\t%.3f%s\t%s", s.Tasks,
			ms(s.Seed), ms(s.GitLiza), ms(s.GitLizaDirect),
			s.Ratio, mark(s.Ratio), s.RatioDirect, mark(s.RatioDirect), goal)
		if s.Compare != nil {
			fmt.Fprintf(w, "\t%s\t%.3f", ms(*s.Compare), s.RatioCompare)
		}
		fmt.Fprintln(w)
	}
	w.Flush()
}

func ms(s stats) string { return fmt.Sprintf("%.1f (%.1f)", s.Median, s.P90) }

func verdict(ok bool) string {
	if ok {
		return " ok"
	}
	return " MISSED"
}
