package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

const warmups = 2 // untimed runs of each variant before the timed ones

// interleave runs each variant warmups+runs times, in a new random order
// every iteration (from a fixed seed, so a run is repeatable) so that no
// variant always runs first or right after a given other one, and returns
// the timed samples of each variant in milliseconds.
// Every run gets a fresh task id.
func (b *bench) interleave(variants []func(id string) *exec.Cmd) ([][]float64, error) {
	runs := make([]func(it int) *exec.Cmd, len(variants))
	for v, f := range variants {
		runs[v] = func(it int) *exec.Cmd { return f(fmt.Sprintf("bench-%c-%d", 'a'+v, it)) }
	}
	return b.interleaveRuns(runs)
}

// interleaveRuns is interleave for variants that pick their own arguments
// from the iteration number (0 to warmups+runs-1).
func (b *bench) interleaveRuns(variants []func(it int) *exec.Cmd) ([][]float64, error) {
	samples := make([][]float64, len(variants))
	order := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < warmups+b.opt.runs; it++ {
		for _, v := range order.Perm(len(variants)) {
			cmd := variants[v](it)
			d, err := timeRun(cmd)
			if err != nil {
				return nil, err
			}
			if it >= warmups {
				samples[v] = append(samples[v], float64(d.Microseconds())/1000)
			}
		}
	}
	return samples, nil
}

// timeRun runs cmd and returns its wall-clock time, process start to exit.
// The command is fully built (binary looked up, buffers attached) beforehand.
func timeRun(cmd *exec.Cmd) (time.Duration, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.Bytes())
	}
	return d, nil
}

func timeErr(cmd *exec.Cmd) error { _, err := timeRun(cmd); return err }

func command(dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// output runs a command and returns its trimmed stdout; the error carries stderr.
func output(dir string, env []string, name string, args ...string) (string, error) {
	cmd := command(dir, env, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

func summarize(ms []float64) stats {
	s := slices.Clone(ms)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	p90 := s[int(math.Ceil(0.9*float64(n)))-1] // nearest rank
	return stats{Median: med, P90: p90, Samples: ms}
}

func progress(msg string) { fmt.Fprintln(os.Stderr, "bench:", msg) }
