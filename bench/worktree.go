package main

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The worktree section times what a new worktree's setup costs when
// scripts/worktree-setup.sh installs an npm dependency tree, with the npm
// cache shared through LIZA_CACHE_DIR and with a private one per worktree.
//
// No network is involved: the packages are tarballs the bench packs itself
// and commits under vendor/npm/ (the stand-in for a registry), and
// package-lock.json names each by a registry URL on a closed port
// (127.0.0.1:9) with its sha512 integrity. `npm ci --offline` then finds a
// package in the cache by that integrity or fails with ENOTCACHED; it never
// connects. On a miss the script "downloads" with `npm cache add` of the
// vendored tarballs, then installs. A real registry adds network time per
// package to every miss, so the ratios measured here are the smallest the
// shared cache gives.

const (
	wtPackages   = 20 // packages in the dependency tree
	wtFiles      = 6  // source files per package
	wtFileBytes  = 3000
	wtPerRound   = 10 // worktrees per round: the first and the last are compared
	wtClosedPort = "http://127.0.0.1:9/"
)

// worktreeVariants are the two repositories: their setup scripts differ only
// in where npm's cache lives.
var worktreeVariants = []struct{ name, cache string }{
	{"shared cache", `$LIZA_CACHE_DIR/npm`},
	{"private cache", `$PWD/.npm-cache`},
}

// worktreeResult holds, per variant, the timed step of the first and of the
// last (wtPerRound-th) worktree of each round.
type worktreeResult struct {
	Rounds   int    `json:"rounds"`
	Packages int    `json:"packages"`
	Step     string `json:"step"` // what is timed: a claim or `git worktree add` + the script
	Npm      string `json:"npm"`
	// Shared and Private are indexed 0 (first worktree) and 1 (last).
	Shared  [2]stats `json:"shared"`
	Private [2]stats `json:"private"`
	// SharedSetup and PrivateSetup are the setup's own time, as each claim
	// recorded it in its worktree_setup event (hundredths of a second).
	SharedSetup  [2]stats `json:"shared_setup"`
	PrivateSetup [2]stats `json:"private_setup"`
	// LastOverFirst is the last worktree's median over the first's, per
	// variant; SharedOverPrivate the shared variant's median over the
	// private one's, for the first and the last worktree.
	LastOverFirst     [2]float64 `json:"last_over_first"`
	SharedOverPrivate [2]float64 `json:"shared_over_private"`
}

// setupScript is the fixture's scripts/worktree-setup.sh with npm's cache at
// cache (a shell word expanded in the worktree).
func setupScript(cache string) string {
	return `#!/bin/sh
# Install node_modules from the lockfile without the network: from npm's
# cache, filled from vendor/npm (this fixture's registry) on a miss.
set -eu
cache="` + cache + `"
flags="--offline --cache $cache --no-audit --no-fund --loglevel=error"
if ! npm ci $flags >/dev/null 2>&1; then
	npm cache add vendor/npm/*.tgz --cache "$cache" --loglevel=error
	npm ci $flags
fi
test -f node_modules/liza-dep-1/index.js
`
}

// npmEnv is b.env with npm pointed at a closed port and kept quiet, so
// that any attempt to reach a registry fails at once.
func (b *bench) npmEnv() []string {
	return append(append([]string{}, b.env...),
		"npm_config_registry="+wtClosedPort,
		"npm_config_update_notifier=false",
		"npm_config_audit=false",
		"npm_config_fund=false",
	)
}

// npmFixture packs wtPackages tiny packages (each but the last depends on
// the next) into dir/vendor/npm and writes package.json and a v3
// package-lock.json naming them at the closed registry with their integrity.
func (b *bench) npmFixture(dir string) error {
	src := filepath.Join(b.tmp, "worktree-packages")
	vendor := filepath.Join(dir, "vendor", "npm")
	if err := os.MkdirAll(vendor, 0o755); err != nil {
		return err
	}
	var dirs []string
	for i := 1; i <= wtPackages; i++ {
		name := fmt.Sprintf("liza-dep-%d", i)
		pdir := filepath.Join(src, name)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return err
		}
		manifest := map[string]any{"name": name, "version": "1.0.0", "main": "index.js"}
		if i < wtPackages {
			manifest["dependencies"] = map[string]string{fmt.Sprintf("liza-dep-%d", i+1): "1.0.0"}
		}
		data, _ := json.Marshal(manifest)
		if err := os.WriteFile(filepath.Join(pdir, "package.json"), data, 0o644); err != nil {
			return err
		}
		for f := 0; f < wtFiles; f++ {
			body := fmt.Sprintf("// %s file %d\nmodule.exports = %q;\n", name, f, strings.Repeat(fmt.Sprintf("%s-%d ", name, f), wtFileBytes/16))
			file := fmt.Sprintf("lib%d.js", f)
			if f == 0 {
				file = "index.js"
			}
			if err := os.WriteFile(filepath.Join(pdir, file), []byte(body), 0o644); err != nil {
				return err
			}
		}
		dirs = append(dirs, pdir)
	}
	args := append([]string{"pack", "--silent", "--pack-destination", vendor}, dirs...)
	if _, err := output(src, b.npmEnv(), "npm", args...); err != nil {
		return err
	}
	root := map[string]any{"name": "liza-bench-app", "version": "1.0.0",
		"dependencies": map[string]string{"liza-dep-1": "1.0.0"}}
	packages := map[string]any{"": root}
	for i := 1; i <= wtPackages; i++ {
		name := fmt.Sprintf("liza-dep-%d", i)
		tgz, err := os.ReadFile(filepath.Join(vendor, name+"-1.0.0.tgz"))
		if err != nil {
			return err
		}
		sum := sha512.Sum512(tgz)
		entry := map[string]any{"version": "1.0.0",
			"resolved":  wtClosedPort + name + "/-/" + name + "-1.0.0.tgz",
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:])}
		if i < wtPackages {
			entry["dependencies"] = map[string]string{fmt.Sprintf("liza-dep-%d", i+1): "1.0.0"}
		}
		packages["node_modules/"+name] = entry
	}
	lock := map[string]any{"name": "liza-bench-app", "version": "1.0.0", "lockfileVersion": 3,
		"requires": true, "packages": packages}
	for file, v := range map[string]any{"package.json": root, "package-lock.json": lock} {
		data, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, file), append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// worktreeRepo makes a repository of lifecycleTasks tasks whose main
// branch holds the npm fixture and a setup script keeping npm's cache at
// cache.
func (b *bench) worktreeRepo(repo, fixture, cache string) error {
	seed, err := b.seedFile(filepath.Dir(repo), wtPerRound*(warmups+b.opt.worktreeRounds))
	if err != nil {
		return err
	}
	if err := b.initRepo(repo); err != nil {
		return err
	}
	if err := os.CopyFS(repo, os.DirFS(fixture)); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(repo, "scripts"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, "scripts", "worktree-setup.sh"), []byte(setupScript(cache)), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("node_modules/\n.npm-cache/\n.worktrees/\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"add", "."},
		{"commit", "-q", "-m", "npm fixture and worktree setup"},
	} {
		if _, err := output(repo, b.env, "git", args...); err != nil {
			return err
		}
	}
	_, err = output(repo, b.env, "git", "liza", "import", seed)
	return err
}

// measureWorktree times, in rounds, wtPerRound new worktrees in a row in
// each of the two repositories, claim by claim alternately in random
// order. A round starts with the shared cache emptied, as a fresh
// repository's is, so its first worktree fills it and the later ones read
// it; the private-cache repository's worktrees each start empty.
func (b *bench) measureWorktree() (worktreeResult, error) {
	r := worktreeResult{Rounds: b.opt.worktreeRounds, Packages: wtPackages, Step: b.worktreeStep()}
	var err error
	if r.Npm, err = output("", b.env, "npm", "--version"); err != nil {
		return r, fmt.Errorf("npm is needed: %v", err)
	}
	dir := filepath.Join(b.tmp, "worktree")
	fixture := filepath.Join(dir, "fixture")
	progress(fmt.Sprintf("worktree: packing %d npm packages", wtPackages))
	if err := b.npmFixture(fixture); err != nil {
		return r, err
	}
	var repos [2]string
	for v, variant := range worktreeVariants {
		repos[v] = filepath.Join(dir, fmt.Sprintf("repo-%d", v), "repo")
		if err := b.worktreeRepo(repos[v], fixture, variant.cache); err != nil {
			return r, err
		}
	}
	progress(fmt.Sprintf("worktree: %d+%d rounds of %d worktrees in each repository (%s)", warmups, r.Rounds, wtPerRound, r.Step))
	var samples, setups [2][2][]float64
	order := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < warmups+r.Rounds; round++ {
		// The setup runner makes LIZA_CACHE_DIR again when it is missing.
		if err := os.RemoveAll(filepath.Join(repos[0], ".git", "liza", "cache", "setup")); err != nil {
			return r, err
		}
		for k := 0; k < wtPerRound; k++ {
			it := round*wtPerRound + k
			for _, v := range order.Perm(2) {
				d, setup, err := b.newWorktree(repos[v], it)
				if err != nil {
					return r, fmt.Errorf("%s: %v", worktreeVariants[v].name, err)
				}
				if round < warmups || (k != 0 && k != wtPerRound-1) {
					continue
				}
				pos := min(k, 1)
				samples[v][pos] = append(samples[v][pos], float64(d.Microseconds())/1000)
				setups[v][pos] = append(setups[v][pos], setup)
			}
		}
	}
	for pos := range 2 {
		r.Shared[pos], r.Private[pos] = summarize(samples[0][pos]), summarize(samples[1][pos])
		r.SharedSetup[pos], r.PrivateSetup[pos] = summarize(setups[0][pos]), summarize(setups[1][pos])
		r.SharedOverPrivate[pos] = r.Shared[pos].Median / r.Private[pos].Median
	}
	r.LastOverFirst = [2]float64{r.Shared[1].Median / r.Shared[0].Median, r.Private[1].Median / r.Private[0].Median}
	return r, nil
}

// worktreeStep says what newWorktree times.
func (b *bench) worktreeStep() string {
	return "git liza --agent coder-N claim ID, which makes the worktree and runs the setup in it"
}

// newWorktree claims run it's task in repo, which makes its worktree and
// runs scripts/worktree-setup.sh in it, and returns how long the claim took,
// whole process, and how long the claim says its setup took (ms); it checks
// that the dependency tree is installed.
func (b *bench) newWorktree(repo string, it int) (time.Duration, float64, error) {
	d, err := timeRun(command(repo, b.npmEnv(), "git", append([]string{"liza"}, claimArgs(it, false)...)...))
	if err != nil {
		return 0, 0, err
	}
	id := taskID(it)
	installed := filepath.Join(repo, ".worktrees", id, "node_modules", fmt.Sprintf("liza-dep-%d", wtPackages), "index.js")
	if _, err := os.Stat(installed); err != nil {
		return 0, 0, fmt.Errorf("%s: the setup did not install the dependency tree: %v", id, err)
	}
	out, err := output(repo, b.env, "git", "liza", "--json", "show", id)
	if err != nil {
		return 0, 0, err
	}
	var task struct {
		History []struct {
			Event   string  `json:"event"`
			Outcome string  `json:"outcome"`
			Seconds float64 `json:"seconds"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(out), &task); err != nil {
		return 0, 0, fmt.Errorf("show %s: %v", id, err)
	}
	for _, e := range task.History {
		if e.Event == "worktree_setup" && e.Outcome == "ok" {
			return d, e.Seconds * 1000, nil
		}
	}
	return 0, 0, fmt.Errorf("%s: the claim recorded no worktree_setup event", id)
}

func printWorktree(r *worktreeResult) {
	if r == nil {
		return
	}
	fmt.Printf("\nNew worktree whose scripts/worktree-setup.sh installs %d npm packages offline (npm %s): %s;\n", r.Packages, r.Npm, r.Step)
	fmt.Printf("first and %dth worktree of a row, median (p90) of %d rounds, ms\n", wtPerRound, r.Rounds)
	fmt.Printf("  %-14s %16s %16s %12s %22s\n", "npm cache", "first", fmt.Sprintf("%dth", wtPerRound), fmt.Sprintf("%dth/first", wtPerRound), "setup alone: first, "+fmt.Sprintf("%dth", wtPerRound))
	for v, variant := range worktreeVariants {
		s, setup := r.Shared, r.SharedSetup
		if v == 1 {
			s, setup = r.Private, r.PrivateSetup
		}
		fmt.Printf("  %-14s %16s %16s %12.2f %22s\n", variant.name, ms(s[0]), ms(s[1]), r.LastOverFirst[v],
			fmt.Sprintf("%.0f, %.0f", setup[0].Median, setup[1].Median))
	}
	fmt.Printf("  %-14s %16.2f %16.2f\n", "shared/private", r.SharedOverPrivate[0], r.SharedOverPrivate[1])
}
