package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
)

const formatTasks = 100 // tasks in the repositories of the format timings

// formatsResult is task add and claim --no-worktree in repositories of
// both object formats, read by git-liza itself and through git's
// plumbing (liza.readThroughGit, the path of repositories whose format
// git-liza does not know).
type formatsResult struct {
	Tasks    int            `json:"tasks"`
	Variants []formatResult `json:"variants"`
}

type formatResult struct {
	Name  string  `json:"name"`
	Add   stats   `json:"add"`
	Claim stats   `json:"claim"`
	Ratio float64 `json:"ratio_add"` // Add's median to the SHA-1 files variant's
}

// measureFormats times the add and the claim on the same state in four
// repositories, interleaved.
func (b *bench) measureFormats() (formatsResult, error) {
	progress("formats: setting up sha1, sha256, each read directly and through git")
	dir := filepath.Join(b.tmp, "formats")
	seed, err := b.seedFile(dir, formatTasks)
	if err != nil {
		return formatsResult{}, err
	}
	variants := []struct {
		name, format string
		through      bool
	}{
		{"sha1, read directly", "sha1", false},
		{"sha1, through git", "sha1", true},
		{"sha256, read directly", "sha256", false},
		{"sha256, through git", "sha256", true},
	}
	var repos []string
	for i, v := range variants {
		repo := filepath.Join(dir, fmt.Sprintf("repo-%d", i))
		if err := b.initRepo(repo, "--object-format="+v.format); err != nil {
			return formatsResult{}, err
		}
		if v.through {
			if _, err := output(repo, b.env, "git", "config", "liza.readThroughGit", "true"); err != nil {
				return formatsResult{}, err
			}
		}
		if _, err := output(repo, b.env, "git", "liza", "import", seed); err != nil {
			return formatsResult{}, err
		}
		repos = append(repos, repo)
	}

	progress(fmt.Sprintf("formats: timing %d+%d adds and claims of each", warmups, b.opt.runs))
	var adds []func(id string) *exec.Cmd
	var claims []func(it int) *exec.Cmd
	for _, repo := range repos {
		adds = append(adds, func(id string) *exec.Cmd {
			return command(repo, b.env, "git", append([]string{"liza"}, addArgs(id)...)...)
		})
		claims = append(claims, func(it int) *exec.Cmd {
			return command(repo, b.env, "git", append([]string{"liza"}, claimArgs(it, true)...)...)
		})
	}
	addSamples, err := b.interleave(adds)
	if err != nil {
		return formatsResult{}, err
	}
	claimSamples, err := b.interleaveRuns(claims)
	if err != nil {
		return formatsResult{}, err
	}
	r := formatsResult{Tasks: formatTasks}
	for i, v := range variants {
		r.Variants = append(r.Variants, formatResult{Name: v.name, Add: summarize(addSamples[i]), Claim: summarize(claimSamples[i])})
	}
	for i := range r.Variants {
		r.Variants[i].Ratio = r.Variants[i].Add.Median / r.Variants[0].Add.Median
	}
	return r, nil
}

func printFormats(r *formatsResult, runs int) {
	fmt.Printf("\nobject formats and the plumbing path (%d tasks), whole process, median (p90) of %d runs, ms\n", r.Tasks, runs)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "repository\tgit liza task add\tgit liza claim --no-worktree\tratio(add)")
	for _, v := range r.Variants {
		fmt.Fprintf(w, "%s\t%s\t%s\t%.2f\n", v.Name, ms(v.Add), ms(v.Claim), v.Ratio)
	}
	w.Flush()
}
