package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpResult is what the MCP server costs and saves. Start-up: git liza
// show ID, whole process, as built (the SDK in git-liza-mcp only) against
// a git-liza that links package mcpserver in (built with an overlay of
// main.go that imports it), interleaved: what every short command would
// pay if the server were linked in. Then a coder's reads and writes, as a
// shell command (git liza --json, a process each) and as a tool call on
// one running server (a round trip on its stdio), interleaved; and what
// starting a server costs a session (spawn, initialize, tools/list).
type mcpResult struct {
	Runs int `json:"runs"`
	// Show and ShowLinked: git-liza show ID, without and with the SDK
	// linked in; Sizes the two binaries' sizes in bytes.
	Show          stats   `json:"show"`
	ShowLinked    stats   `json:"show_linked"`
	ShowRatio     float64 `json:"show_ratio"`
	Size          int64   `json:"size"`
	SizeLinked    int64   `json:"size_linked"`
	StatusCLI     stats   `json:"status_cli"`
	StatusTool    stats   `json:"status_tool"`
	CheckpointCLI stats   `json:"checkpoint_cli"`
	CheckpointMCP stats   `json:"checkpoint_tool"`
	Start         stats   `json:"server_start"`
}

// linkedMain is git-liza's main with package mcpserver linked in.
const linkedMain = `package main

import (
	"context"
	"os"

	"github.com/liza-dev/git-liza/commands"
	_ "github.com/liza-dev/git-liza/mcpserver"
)

func main() {
	os.Exit(commands.Run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}
`

// measureMCP builds the linked variant and git-liza-mcp, makes a board with
// one task claimed by coder-1, and times the variants.
func (b *bench) measureMCP(root string) (mcpResult, error) {
	r := mcpResult{Runs: b.opt.runs}
	dir := filepath.Join(b.tmp, "mcp")
	linked := filepath.Join(dir, "linked", "git-liza")
	server := filepath.Join(b.bin, "git-liza-mcp")
	overlay := filepath.Join(dir, "overlay.json")
	mainGo := filepath.Join(dir, "main.go")
	if err := os.MkdirAll(filepath.Dir(linked), 0o755); err != nil {
		return r, err
	}
	if err := os.WriteFile(mainGo, []byte(linkedMain), 0o644); err != nil {
		return r, err
	}
	if err := os.WriteFile(overlay, []byte(fmt.Sprintf(`{"Replace":{%q:%q}}`, filepath.Join(root, "main.go"), mainGo)), 0o644); err != nil {
		return r, err
	}
	progress("mcp: building git-liza with the MCP SDK linked in, and git-liza-mcp")
	if _, err := output(root, nil, "go", "build", "-overlay", overlay, "-o", linked, "."); err != nil {
		return r, err
	}
	if _, err := output(root, nil, "go", "build", "-o", server, "./git-liza-mcp"); err != nil {
		return r, err
	}
	for _, s := range []struct {
		path string
		size *int64
	}{{b.gitLiza, &r.Size}, {linked, &r.SizeLinked}} {
		fi, err := os.Stat(s.path)
		if err != nil {
			return r, err
		}
		*s.size = fi.Size()
	}

	repo := filepath.Join(dir, "repo")
	if err := b.mcpBoard(repo); err != nil {
		return r, err
	}
	progress(fmt.Sprintf("mcp: %d+%d runs of git-liza show, with and without the SDK linked", warmups, b.opt.runs))
	samples, err := b.interleaveRuns([]func(int) *exec.Cmd{
		func(int) *exec.Cmd { return command(repo, b.env, b.gitLiza, "show", "t1") },
		func(int) *exec.Cmd { return command(repo, b.env, linked, "show", "t1") },
	})
	if err != nil {
		return r, err
	}
	r.Show, r.ShowLinked = summarize(samples[0]), summarize(samples[1])
	r.ShowRatio = r.ShowLinked.Median / r.Show.Median

	progress(fmt.Sprintf("mcp: %d+%d runs of a coder's status and checkpoint, by command and by tool", warmups, b.opt.runs))
	env := append(b.env, "LIZA_AGENT_ID=coder-1", "LIZA_ROLE=coder", "LIZA_TASK=t1", "LIZA_PROJECT_ROOT="+repo)
	ctx := context.Background()
	cs, err := startMCP(ctx, server, repo, env)
	if err != nil {
		return r, err
	}
	defer cs.Close()
	cp := []string{"--intent", "write a.txt", "--validation", "test -f a.txt", "--files", "a.txt"}
	var statusCLI, statusTool, cpCLI, cpTool, start []float64
	order := []func(it int) error{
		func(int) error {
			return timeInto(&statusCLI, func() error {
				return timeErr(command(repo, env, b.gitLiza, "--json", "status"))
			})
		},
		func(int) error {
			return timeInto(&statusTool, func() error { return callTool(ctx, cs, "status", map[string]any{}) })
		},
		func(int) error {
			return timeInto(&cpCLI, func() error {
				return timeErr(command(repo, env, b.gitLiza, append([]string{"checkpoint", "t1"}, cp...)...))
			})
		},
		func(int) error {
			return timeInto(&cpTool, func() error {
				return callTool(ctx, cs, "checkpoint", map[string]any{"intent": "write a.txt", "validation": "test -f a.txt", "files_to_modify": []string{"a.txt"}})
			})
		},
		func(int) error {
			return timeInto(&start, func() error {
				s, err := startMCP(ctx, server, repo, env)
				if err == nil {
					err = s.Close()
				}
				return err
			})
		},
	}
	perm := rand.New(rand.NewPCG(5, 6))
	for it := 0; it < warmups+b.opt.runs; it++ {
		for _, v := range perm.Perm(len(order)) {
			if err := order[v](it); err != nil {
				return r, err
			}
		}
		if it == warmups-1 {
			statusCLI, statusTool, cpCLI, cpTool, start = nil, nil, nil, nil, nil
		}
	}
	r.StatusCLI, r.StatusTool = summarize(statusCLI), summarize(statusTool)
	r.CheckpointCLI, r.CheckpointMCP = summarize(cpCLI), summarize(cpTool)
	r.Start = summarize(start)
	return r, nil
}

// mcpBoard makes a repository with a board and task t1 claimed by coder-1.
func (b *bench) mcpBoard(repo string) error {
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, "spec.md"), []byte("# spec\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"git", "init", "-q", "-b", "main"}, {"git", "add", "."}, {"git", "commit", "-q", "-m", "spec"},
		{b.gitLiza, "init", "bench the MCP server"},
		{b.gitLiza, "task", "add", "--id", "t1", "--desc", "write a.txt", "--spec", "spec.md", "--done", "a.txt exists", "--scope", "IN: a.txt"},
		{b.gitLiza, "--agent", "coder-1", "claim", "t1", "--no-worktree"},
	} {
		if _, err := output(repo, b.env, args[0], args[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// startMCP starts a server and completes the handshake and a tools/list.
func startMCP(ctx context.Context, server, dir string, env []string) (*mcp.ClientSession, error) {
	cmd := exec.Command(server)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		cs.Close()
		return nil, err
	}
	return cs, nil
}

// callTool calls a tool; a refusal is an error.
func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				return fmt.Errorf("%s refused: %s", name, t.Text)
			}
		}
		return fmt.Errorf("%s refused", name)
	}
	return nil
}

// timeInto appends the milliseconds f took to samples.
func timeInto(samples *[]float64, f func() error) error {
	start := time.Now()
	if err := f(); err != nil {
		return err
	}
	*samples = append(*samples, float64(time.Since(start).Microseconds())/1000)
	return nil
}

// printMCP prints what the MCP server costs and saves.
func printMCP(r *mcpResult) {
	if r == nil {
		return
	}
	fmt.Printf("\nmcp: the MCP SDK linked into git-liza or kept in git-liza-mcp; a coder's status and checkpoint as commands and as tool calls; %d runs each, interleaved, ms\n", r.Runs)
	fmt.Printf("  git-liza show ID, median (p90): %s as built (%.1f MB), %s with the SDK linked in (%.1f MB): ratio %.2f\n",
		ms(r.Show), float64(r.Size)/1e6, ms(r.ShowLinked), float64(r.SizeLinked)/1e6, r.ShowRatio)
	fmt.Printf("  status:     git liza --json status %s, the status tool %s (ratio %.2f)\n", ms(r.StatusCLI), ms(r.StatusTool), r.StatusTool.Median/r.StatusCLI.Median)
	fmt.Printf("  checkpoint: git liza checkpoint %s, the checkpoint tool %s (ratio %.2f)\n", ms(r.CheckpointCLI), ms(r.CheckpointMCP), r.CheckpointMCP.Median/r.CheckpointCLI.Median)
	fmt.Printf("  a session's server: start, initialize and list its tools %s\n", ms(r.Start))
}
