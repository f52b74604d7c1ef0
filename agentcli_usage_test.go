package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liza-dev/git-liza/agent"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/transcript"
)

// scriptedPrice is the price config.prices gives the scripted model in
// TestAgentCLIUsage, in USD per million tokens.
var scriptedPrice = contracts.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}

// TestAgentCLIUsage runs a planner-less team (one coder, one code
// reviewer, as root with --sandboxed) through each real agent CLI against
// a scripted model that reports known usage in every answer, cache reads
// and (Anthropic's API only) cache writes included: the tokens each
// session's end records on the board are exactly what the endpoint
// reported for that session's requests, summed over its turns; the cost is
// what Claude Code reported (cost_source reported), and for codex and
// gemini what the board's price table gives (cost_source priced).
func TestAgentCLIUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("the agent CLIs are not run with -short")
	}
	e2eOnly(t)
	if os.Geteuid() != 0 {
		t.Skip("the presets' --sandboxed flags are for root: not running as root")
	}
	if _, err := exec.LookPath("git-liza"); err != nil {
		t.Skip("git-liza is not on PATH (TestMain puts it there)")
	}
	for _, c := range agentCLIs {
		t.Run(c.name, func(t *testing.T) {
			path, ok := findCLI(c.name, c.program)
			if !ok {
				t.Skipf("%s is not installed: .ci/run installs it (npm install --prefix %s %s@%s)", c.program, filepath.Join(agent.CLICache(), c.name), c.pkg, c.version)
			}
			usageTeam(t, c.name, path)
		})
	}
}

// sessionTokens is the usage the scripted model reports for each answer:
// different for the coder's and the reviewer's sessions and for a CLI's
// side requests, growing with the turn, so that a turn lost or counted
// twice shows.
func sessionTokens(cli string) func(turn) tokenUsage {
	return func(tn turn) tokenUsage {
		var u tokenUsage
		switch {
		case coderRE.MatchString(tn.text):
			u = tokenUsage{input: 1200 + 100*int64(tn.answers), output: 34, cacheRead: 3000, cacheWrite: 500}
		case reviewerRE.MatchString(tn.text):
			u = tokenUsage{input: 800 + 10*int64(tn.answers), output: 21, cacheRead: 2000, cacheWrite: 300}
		default:
			u = tokenUsage{input: 7, output: 3}
		}
		if cli != "claude" {
			u.cacheWrite = 0 // only Anthropic's API reports cache writes
		}
		return u
	}
}

func usageTeam(t *testing.T, name, cliPath string) {
	base, root, bin := teamBase(t, "git-liza-usage-")
	home := filepath.Join(base, "home")
	model := newScriptedModel(t)
	model.usage = sessionTokens(name)
	env := cliEnv(t, home, bin+":"+filepath.Dir(cliPath)+":/usr/local/bin:/usr/bin:/bin", model)
	writeFile(t, filepath.Join(base, "probe.sh"), "true\n")
	writeFile(t, filepath.Join(root, "specs", "vision.md"), "# Vision\n\nhello.txt says hello.\n")
	writeFile(t, filepath.Join(root, "scripts", "integration-test.sh"), "#!/bin/sh\ngrep -q hello hello.txt\n")
	if err := os.Chmod(filepath.Join(root, "scripts", "integration-test.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(stdin []byte, args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = root, env
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(nil, "git", "init", "-q", "-b", "main")
	run(nil, "git", "add", ".")
	run(nil, "git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", "commit", "-q", "-m", "vision")
	run(nil, "git", "liza", "init", "--spec", "specs/vision.md", "Say hello")
	run(nil, "git", "liza", "hooks", "install")
	run(nil, "git", "liza", "task", "add", "--id", "hello", "--desc", "Write hello.txt", "--spec", "specs/vision.md",
		"--done", "hello.txt says hello", "--scope", "IN: hello.txt")
	// The scripted model's price, set as a person corrects one: in the
	// state's config.prices, by import.
	st, err := contracts.ParseState([]byte(run(nil, "git", "liza", "export")))
	if err != nil {
		t.Fatal(err)
	}
	st.Config.Prices = map[string]contracts.Price{"scripted": scriptedPrice}
	b, err := contracts.MarshalState(st)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(base, "priced.yaml"), string(b))
	run(nil, "git", "liza", "import", filepath.Join(base, "priced.yaml"))

	team := exec.Command("git", "liza", "run", "--no-planner", "--coders", "1", "--reviewers", "1", "--poll", "200ms", "--cli", name, "--sandboxed")
	team.Dir, team.Env = root, env
	rt := startTeam(t, team)
	out, exited, stop := &rt.out, rt.exited, rt.stop
	fail := func(format string, a ...any) {
		t.Helper()
		stop()
		t.Fatalf(format+"\nteam output:\n%s\nmodel:\n%s", append(a, out.String(), model.report())...)
	}
	deadline := time.Now().Add(120 * time.Second)
	for !strings.Contains(show(root, env, teamUser{uid: os.Geteuid(), gid: os.Getegid()}), "status: MERGED") {
		select {
		case err := <-exited:
			exited <- err
			fail("the team stopped before the task was merged: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			fail("the task was not merged within 120 seconds")
		}
	}
	stop()

	st, err = contracts.ParseState([]byte(run(nil, "git", "liza", "export")))
	if err != nil {
		t.Fatal(err)
	}
	var task *contracts.Task
	for _, tk := range append(st.Tasks, st.Archive...) {
		if tk.ID == "hello" {
			task = tk
		}
	}
	if task == nil {
		fail("no task hello on the board")
	}
	// What the endpoint reported, by session; a CLI's side requests
	// belong to the session that was running (one at a time here).
	want := map[string]contracts.Usage{}
	model.mu.Lock()
	reported := append([]reportedUsage(nil), model.reported...)
	model.mu.Unlock()
	side := tokenUsage{}
	for _, r := range reported {
		if r.session == "" {
			side.input += r.usage.input
			side.output += r.usage.output
			continue
		}
		agent := map[string]string{"coder": "coder-1", "reviewer": "code-reviewer-1"}[r.session]
		u := want[agent]
		u.Add(contracts.Usage{InputTokens: r.usage.input, OutputTokens: r.usage.output, CacheReadTokens: r.usage.cacheRead, CacheWriteTokens: r.usage.cacheWrite})
		want[agent] = u
	}
	got := map[string]contracts.Usage{}
	sessions := map[string]int{}
	for _, ev := range task.History {
		if u, ok := contracts.SessionUsage(ev); ok {
			g := got[ev.Agent]
			g.Add(u)
			got[ev.Agent] = g
			sessions[ev.Agent]++
		}
	}
	t.Logf("%s: reported by the endpoint %+v (side requests %+v); on the board %+v", name, want, side, got)
	if side != (tokenUsage{}) {
		t.Logf("%s made side requests that reported %d input and %d output tokens", name, side.input, side.output)
	}
	for _, agent := range []string{"coder-1", "code-reviewer-1"} {
		g, w := got[agent], want[agent]
		if sessions[agent] != 1 {
			fail("%s: %d sessions with usage on the board, want 1", agent, sessions[agent])
		}
		if g.InputTokens != w.InputTokens || g.OutputTokens != w.OutputTokens || g.CacheReadTokens != w.CacheReadTokens || g.CacheWriteTokens != w.CacheWriteTokens {
			fail("%s: the board has %+v, the endpoint reported %+v", agent, g, w)
		}
		switch name {
		case "claude":
			cost, ok := claudeReportedCost(t, root, agent)
			if g.CostSource != contracts.CostReported || !ok || g.CostUSD != cost {
				fail("%s: cost %v (%s), Claude Code reported %v", agent, g.CostUSD, g.CostSource, cost)
			}
		default:
			if g.Model != "scripted" || g.CostSource != contracts.CostPriced || math.Abs(g.CostUSD-scriptedPrice.Cost(w)) > 1e-9 {
				fail("%s: cost %v (%s, model %q), the table gives %v", agent, g.CostUSD, g.CostSource, g.Model, scriptedPrice.Cost(w))
			}
		}
	}
	if got := run(nil, "git", "liza", "validate", "--history"); !strings.HasPrefix(got, "VALID (") {
		fail("validate --history: %s", got)
	}
}

// claudeReportedCost is the total_cost_usd of the result event in agent's
// session log: what Claude Code said the session cost.
func claudeReportedCost(t *testing.T, root, agent string) (float64, bool) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(root, ".git", "liza", "logs", "sessions", agent, "*.jsonl"))
	cost, found := 0.0, false
	for _, l := range logs {
		f, err := os.Open(l)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 2*transcript.MaxLine)
		for sc.Scan() {
			var r transcript.Record
			if json.Unmarshal(sc.Bytes(), &r) != nil || r.JSON == nil {
				continue
			}
			var ev struct {
				Type string   `json:"type"`
				Cost *float64 `json:"total_cost_usd"`
			}
			if json.Unmarshal(r.JSON, &ev) == nil && ev.Type == "result" && ev.Cost != nil {
				cost += *ev.Cost
				found = true
			}
		}
		f.Close()
	}
	return cost, found
}
