package main

import (
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// scaleAdds is how many task adds the bytes per add are measured over.
const scaleAdds = 40

// scaleResult is what the commands that read the whole board cost on a
// small board and on a large one whose last commits are its history.
type scaleResult struct {
	Small   boardCosts  `json:"small"`
	Large   boardCosts  `json:"large"`
	Compare *boardCosts `json:"large_compare,omitempty"` // git-liza built from -compare REV, on a board it built
	History int         `json:"history_commits"`
	// ValidateHistory is one git liza validate --history over the large
	// board's history, in seconds.
	ValidateHistory float64 `json:"validate_history_s"`
}

// boardCosts is one board's figures: each command's time (milliseconds)
// and the most memory it held (MB, the process's maximum resident set),
// and the new objects one task add writes (bytes).
type boardCosts struct {
	Tasks       int     `json:"tasks"`
	BytesPerAdd float64 `json:"bytes_per_add"`
	Status      cost    `json:"status"`
	Ready       cost    `json:"status_ready"`
	ShowJSON    cost    `json:"show_json"`
	Export      cost    `json:"export"`
	Validate    cost    `json:"validate"`
}

type cost struct {
	Stats stats   `json:"time"`
	MaxMB float64 `json:"max_rss_mb"`
}

// measureScale builds a board of small tasks and one of large tasks, the
// large one's last history commits task adds, and times status, show
// --json, export and validate on both (and, with -compare, on a large
// board the other build made), then validate --history once.
func (b *bench) measureScale() (scaleResult, error) {
	large, history := b.opt.scaleTasks, b.opt.scaleHistory
	r := scaleResult{History: history}
	var err error
	if r.Small, err = b.boardCosts(b.gitLiza, filepath.Join(b.tmp, "scale-small"), 100, 0); err != nil {
		return r, err
	}
	if r.Large, err = b.boardCosts(b.gitLiza, filepath.Join(b.tmp, "scale-large"), large, history); err != nil {
		return r, err
	}
	progress(fmt.Sprintf("scale: validate --history over %d commits of a %d-task board", history, large))
	start := time.Now()
	if out, err := b.lizaCmd(b.gitLiza, filepath.Join(b.tmp, "scale-large", "repo"), "validate", "--history").CombinedOutput(); err != nil {
		return r, fmt.Errorf("validate --history: %v\n%s", err, out)
	}
	r.ValidateHistory = time.Since(start).Seconds()
	if b.compare != "" {
		// The same board: its history of one commit per add is what
		// makes the large board's reads what they are.
		c, err := b.boardCosts(b.compare, filepath.Join(b.tmp, "scale-compare"), large, history)
		if err != nil {
			return r, fmt.Errorf("-compare build: %v", err)
		}
		r.Compare = &c
	}
	return r, nil
}

// lizaCmd runs the git-liza binary bin directly (not through git, so that
// two builds can be told apart) in repo.
func (b *bench) lizaCmd(bin, repo string, args ...string) *exec.Cmd {
	return command(repo, b.env, bin, args...)
}

// boardCosts makes a board of n tasks with bin, the last history of them
// added one operation each, and measures it.
func (b *bench) boardCosts(bin, dir string, n, history int) (boardCosts, error) {
	c := boardCosts{Tasks: n}
	progress(fmt.Sprintf("scale: a %d-task board (%s)", n, filepath.Base(bin)))
	seed, err := b.seedFile(dir, n-history)
	if err != nil {
		return c, err
	}
	repo := filepath.Join(dir, "repo")
	if err := b.initRepo(repo); err != nil {
		return c, err
	}
	if _, err := output(repo, b.env, "git", "config", "gc.auto", "0"); err != nil {
		return c, err
	}
	if out, err := b.lizaCmd(bin, repo, "import", seed).CombinedOutput(); err != nil {
		return c, fmt.Errorf("import: %v\n%s", err, out)
	}
	if history > 0 {
		progress(fmt.Sprintf("scale: %d task adds, one commit each", history))
		script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do i=$((i+1)); %s --agent planner-1 task add --id hist-$i --desc "Added task $i" --spec specs/vision.md --done "tests pass" --scope "IN: src/$i" >/dev/null || exit 1; done`, history, bin)
		if out, err := command(repo, b.env, "sh", "-c", script).CombinedOutput(); err != nil {
			return c, fmt.Errorf("building the history: %v\n%s", err, out)
		}
	}
	before, err := objectBytes(repo, b.env)
	if err != nil {
		return c, err
	}
	for i := 0; i < scaleAdds; i++ {
		if out, err := b.lizaCmd(bin, repo, addArgs(fmt.Sprintf("bytes-%d", i))...).CombinedOutput(); err != nil {
			return c, fmt.Errorf("task add: %v\n%s", err, out)
		}
	}
	after, err := objectBytes(repo, b.env)
	if err != nil {
		return c, err
	}
	c.BytesPerAdd = float64(after-before) / scaleAdds
	for _, m := range []struct {
		into *cost
		args []string
	}{
		{&c.Status, []string{"status"}},
		{&c.Ready, []string{"status", "--ready"}},
		{&c.ShowJSON, []string{"--json", "show"}},
		{&c.Export, []string{"export"}},
		{&c.Validate, []string{"validate"}},
	} {
		progress(fmt.Sprintf("scale: git-liza %s on %d tasks", strings.Join(m.args, " "), n))
		if *m.into, err = b.timeWithMemory(func() *exec.Cmd { return b.lizaCmd(bin, repo, m.args...) }); err != nil {
			return c, err
		}
	}
	return c, nil
}

// timeWithMemory runs a command warmups+runs times (at most 7 timed: a
// whole board is slow) and returns its times and the largest resident set
// any run reached.
func (b *bench) timeWithMemory(mk func() *exec.Cmd) (cost, error) {
	var c cost
	var ms []float64
	for i := 0; i < warmups+min(b.opt.runs, 7); i++ {
		cmd := mk()
		d, err := timeRun(cmd)
		if err != nil {
			return c, err
		}
		if i >= warmups {
			ms = append(ms, float64(d.Microseconds())/1000)
		}
		if kb, ok := maxRSSKB(cmd.ProcessState); ok {
			c.MaxMB = max(c.MaxMB, float64(kb)/1024)
		}
	}
	c.Stats = summarize(ms)
	return c, nil
}

// objectBytes is the size of repo's loose object files and packs (their
// own bytes, not the disk blocks they take; a pack's index not counted):
// an operation writes its objects as one small pack.
func objectBytes(repo string, env []string) (int64, error) {
	dir, err := output(repo, env, "git", "rev-parse", "--git-path", "objects")
	if err != nil {
		return 0, err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repo, dir)
	}
	var total int64
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && len(d.Name()) != 2 && d.Name() != "pack" {
			return filepath.SkipDir
		}
		if !d.IsDir() && (filepath.Base(filepath.Dir(path)) != "pack" || strings.HasSuffix(path, ".pack")) {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	return total, err
}

func printScale(r *scaleResult) {
	fmt.Printf("\nWhole-board reads and bytes per operation (go run ./bench -scale-tasks %d -scale-history %d):\n", r.Large.Tasks, r.History)
	rows := []struct {
		name string
		get  func(c boardCosts) cost
	}{
		{"status", func(c boardCosts) cost { return c.Status }},
		{"--ready", func(c boardCosts) cost { return c.Ready }},
		{"show --json", func(c boardCosts) cost { return c.ShowJSON }},
		{"export", func(c boardCosts) cost { return c.Export }},
		{"validate", func(c boardCosts) cost { return c.Validate }},
	}
	fmt.Printf("  %-12s %22s %22s %8s", "", fmt.Sprintf("%d tasks ms (MB)", r.Small.Tasks), fmt.Sprintf("%d tasks ms (MB)", r.Large.Tasks), "ratio")
	if r.Compare != nil {
		fmt.Printf(" %22s %8s", "-compare ms (MB)", "this/rev")
	}
	fmt.Println()
	for _, row := range rows {
		s, l := row.get(r.Small), row.get(r.Large)
		fmt.Printf("  %-12s %14.1f (%5.0f) %14.1f (%5.0f) %8.2f", row.name, s.Stats.Median, s.MaxMB, l.Stats.Median, l.MaxMB, l.Stats.Median/s.Stats.Median)
		if r.Compare != nil {
			c := row.get(*r.Compare)
			fmt.Printf(" %14.1f (%5.0f) %8.3f", c.Stats.Median, c.MaxMB, l.Stats.Median/c.Stats.Median)
		}
		fmt.Println()
	}
	fmt.Printf("  %-12s %22.0f %22.0f %8.2f", "bytes/add", r.Small.BytesPerAdd, r.Large.BytesPerAdd, r.Large.BytesPerAdd/r.Small.BytesPerAdd)
	if r.Compare != nil {
		fmt.Printf(" %22.0f %8.3f", r.Compare.BytesPerAdd, r.Large.BytesPerAdd/r.Compare.BytesPerAdd)
	}
	fmt.Printf("\n  validate --history over %d commits at %d tasks: %.1f s\n", r.History, r.Large.Tasks, r.ValidateHistory)
}
