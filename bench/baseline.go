package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// goals are the target ratios git-liza/baseline, by number of tasks.
var goals = map[int]float64{100: 0.30, 1000: 0.10}

// findYq picks mikefarah yq v4 from PATH or ~/go/bin, else installs it into b.bin.
func (b *bench) findYq() error {
	var candidates []string
	if p, err := exec.LookPath("yq"); err == nil {
		candidates = append(candidates, p)
	}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, "go", "bin", "yq"))
	}
	for _, c := range candidates {
		if v, err := output("", nil, c, "--version"); err == nil && strings.Contains(v, "mikefarah") {
			b.yq = c
			return nil
		}
	}
	progress("mikefarah yq v4 not found; installing it with install-yq.sh")
	env := append(os.Environ(), "BIN="+b.bin)
	if _, err := output("", env, "sh", filepath.Join(b.scripts, "install-yq.sh")); err != nil {
		return fmt.Errorf("mikefarah yq v4 is not on PATH or in ~/go/bin, and install-yq.sh failed: %v", err)
	}
	b.yq = filepath.Join(b.bin, "yq")
	if v, err := output("", nil, b.yq, "--version"); err != nil || !strings.Contains(v, "mikefarah") {
		return fmt.Errorf("install-yq.sh did not produce mikefarah yq: %q %v", v, err)
	}
	return nil
}

// measureSize times the baseline, `git liza` and `git-liza` adding one task to a
// state of n tasks, interleaved; with -compare, the build of REV too, in a
// repository of its own.
func (b *bench) measureSize(n int) (sizeResult, error) {
	progress(fmt.Sprintf("%d tasks: setting up", n))
	dir := filepath.Join(b.tmp, fmt.Sprintf("size-%d", n))
	seed, err := b.seedFile(dir, n)
	if err != nil {
		return sizeResult{}, err
	}
	// The baseline edits its own copy; flock takes STATE.lock beside it.
	state := filepath.Join(dir, "state.yaml")
	if err := copyFile(seed, state); err != nil {
		return sizeResult{}, err
	}
	repo := filepath.Join(dir, "repo")
	if err := b.newRepo(repo, seed); err != nil {
		return sizeResult{}, err
	}
	// With -compare, each build adds in a repository of its own, made the
	// same way: repo holds the adds of two variants, so it grows twice as
	// fast and would not compare like with like.
	compared, own := filepath.Join(dir, "repo-compare"), filepath.Join(dir, "repo-this")
	if b.compare != "" {
		if err := b.newCompareRepo(compared, b.compare, seed); err != nil {
			return sizeResult{}, err
		}
		if err := b.newCompareRepo(own, b.gitLiza, seed); err != nil {
			return sizeResult{}, err
		}
	}

	progress(fmt.Sprintf("%d tasks: timing %d+%d runs of each", n, warmups, b.opt.runs))
	yqEnv := append(slices.Clip(b.env), "YQ="+b.yq)
	variants := []func(id string) *exec.Cmd{
		func(id string) *exec.Cmd {
			return command(dir, yqEnv, "bash", filepath.Join(b.scripts, "seed-add.sh"), state, id)
		},
		func(id string) *exec.Cmd {
			return command(repo, b.env, "git", append([]string{"liza"}, addArgs(id)...)...)
		},
		func(id string) *exec.Cmd { return command(repo, b.env, b.gitLiza, addArgs(id)...) },
		func(id string) *exec.Cmd { return command(repo, b.env, "git", "liza-floor") },
		func(id string) *exec.Cmd {
			return command(repo, b.env, "git", "update-ref", "refs/bench/"+id, "HEAD")
		},
	}
	if b.compare != "" {
		variants = append(variants,
			func(id string) *exec.Cmd { return command(compared, b.env, b.compare, addArgs(id)...) },
			func(id string) *exec.Cmd { return command(own, b.env, b.gitLiza, addArgs(id)...) })
	}
	samples, err := b.interleave(variants)
	if err != nil {
		return sizeResult{}, err
	}
	r := sizeResult{Tasks: n, Seed: summarize(samples[0]), GitLiza: summarize(samples[1]), GitLizaDirect: summarize(samples[2])}
	r.Ratio = r.GitLiza.Median / r.Seed.Median
	r.RatioDirect = r.GitLizaDirect.Median / r.Seed.Median
	f := &floor{Dispatch: summarize(samples[3]), UpdateRef: summarize(samples[4])}
	f.Median = f.Dispatch.Median + f.UpdateRef.Median
	f.Ratio = f.Median / r.Seed.Median
	r.Floor = f
	if g, ok := goals[n]; ok {
		r.Goal = &g
	}
	if b.compare != "" {
		r.setCompare(samples[5], samples[6])
	}
	return r, nil
}

// buildFloor builds git-liza-floor, an empty Go program, beside git-liza,
// and git-liza-linked (bench/linked), which starts as git-liza does and
// runs no command.
func (b *bench) buildFloor(root string) error {
	dir := filepath.Join(b.tmp, "floor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return err
	}
	if _, err := output(dir, nil, "go", "build", "-o", filepath.Join(b.bin, "git-liza-floor"), "main.go"); err != nil {
		return fmt.Errorf("building git-liza-floor: %v", err)
	}
	if _, err := output(root, nil, "go", "build", "-o", filepath.Join(b.bin, "git-liza-linked"), "./bench/linked"); err != nil {
		return fmt.Errorf("building git-liza-linked: %v", err)
	}
	return nil
}

// measureClaim times the baseline, `git liza` and `git-liza` claiming one
// UNCLAIMED task (without a worktree) in a state of n tasks, interleaved. Run
// it takes task-(it+1) for coder-(it+1): a coder holds one task at a time. The
// git-liza variants (and the build of -compare REV) claim in repositories of
// their own, so each finds its task unclaimed.
func (b *bench) measureClaim(n int) (sizeResult, error) {
	if total := warmups + b.opt.runs; total > n {
		return sizeResult{}, fmt.Errorf("%d runs need %d unclaimed tasks, and the state has %d", b.opt.runs, total, n)
	}
	progress(fmt.Sprintf("claim, %d tasks: setting up", n))
	dir := filepath.Join(b.tmp, fmt.Sprintf("claim-%d", n))
	seed, err := b.seedFile(dir, n)
	if err != nil {
		return sizeResult{}, err
	}
	state := filepath.Join(dir, "state.yaml")
	if err := copyFile(seed, state); err != nil {
		return sizeResult{}, err
	}
	viaGit, direct := filepath.Join(dir, "repo-git"), filepath.Join(dir, "repo-direct")
	for _, repo := range []string{viaGit, direct} {
		if err := b.newRepo(repo, seed); err != nil {
			return sizeResult{}, err
		}
	}
	compared := filepath.Join(dir, "repo-compare")
	if b.compare != "" {
		if err := b.newCompareRepo(compared, b.compare, seed); err != nil {
			return sizeResult{}, err
		}
	}

	progress(fmt.Sprintf("claim, %d tasks: timing %d+%d runs of each", n, warmups, b.opt.runs))
	yqEnv := append(slices.Clip(b.env), "YQ="+b.yq)
	variants := []func(it int) *exec.Cmd{
		func(it int) *exec.Cmd {
			return command(dir, yqEnv, "bash", filepath.Join(b.scripts, "seed-claim.sh"), state, taskID(it), coderID(it))
		},
		func(it int) *exec.Cmd {
			return command(viaGit, b.env, "git", append([]string{"liza"}, claimArgs(it, true)...)...)
		},
		func(it int) *exec.Cmd { return command(direct, b.env, b.gitLiza, claimArgs(it, true)...) },
	}
	if b.compare != "" {
		variants = append(variants, func(it int) *exec.Cmd { return command(compared, b.env, b.compare, claimArgs(it, true)...) })
	}
	samples, err := b.interleaveRuns(variants)
	if err != nil {
		return sizeResult{}, err
	}
	// seed-claim.sh exits 0 whether or not its select matched: check that
	// every run claimed its task.
	data, err := os.ReadFile(state)
	if err != nil {
		return sizeResult{}, err
	}
	if got, want := strings.Count(string(data), "status: CLAIMED"), warmups+b.opt.runs; got != want {
		return sizeResult{}, fmt.Errorf("the baseline claimed %d tasks, want %d", got, want)
	}
	r := sizeResult{Tasks: n, Seed: summarize(samples[0]), GitLiza: summarize(samples[1]), GitLizaDirect: summarize(samples[2])}
	r.Ratio = r.GitLiza.Median / r.Seed.Median
	r.RatioDirect = r.GitLizaDirect.Median / r.Seed.Median
	if g, ok := goals[n]; ok {
		r.Goal = &g
	}
	if b.compare != "" {
		r.setCompare(samples[3], samples[2])
	}
	return r, nil
}
