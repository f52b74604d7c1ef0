package commands

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
)

// git liza --help never reaches git-liza: git turns it into
// `git help liza`, which opens the manual page git-liza(1) with man (or
// the viewer help.format names). install-man writes that page where man
// looks: man-db searches <dir>/../share/man for every <dir> on PATH, so
// the default, beside the directory git-liza runs from (go install's
// ~/go/bin gives ~/go/share/man/man1), needs no MANPATH.

func (e *Env) installManCmd() *cli.Command {
	return &cli.Command{
		Name:  "install-man",
		Usage: "install the manual page git-liza(1), which git liza --help opens",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "write git-liza.1 into `DIR` (default: ../share/man/man1 beside the git-liza binary)"},
			&cli.BoolFlag{Name: "print", Usage: "print the page (roff) on standard output instead"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "install-man [--dir DIR | --print]"); err != nil {
				return err
			}
			var page bytes.Buffer
			root := e.app()
			prepare(root, "")
			writeMan(&page, root)
			if cmd.Bool("print") {
				_, err := e.Stdout.Write(page.Bytes())
				return err
			}
			dir := cmd.String("dir")
			if dir == "" {
				exe, err := os.Executable()
				if err != nil {
					return contracts.Invalidf("cannot tell where git-liza is (%v): pass --dir", err)
				}
				if real, err := filepath.EvalSymlinks(exe); err == nil {
					exe = real
				}
				dir = filepath.Join(filepath.Dir(filepath.Dir(exe)), "share", "man", "man1")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return contracts.Invalidf("cannot create %s: %v", dir, err)
			}
			file := filepath.Join(dir, "git-liza.1")
			if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
				return contracts.Invalidf("cannot write %s: %v", file, err)
			}
			if cmd.Bool("json") {
				return (&session{Env: e}).printJSON(map[string]string{"installed": file})
			}
			fmt.Fprintf(e.Stdout, "installed %s\n", file)
			fmt.Fprintf(e.Stdout, "git liza --help opens it when man searches %s (it does when %s is on PATH; else add %s to MANPATH)\n",
				filepath.Dir(dir), filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(dir))), "bin"), filepath.Dir(dir))
			return nil
		},
	}
}

// writeMan writes the manual page of the command tree root, in roff.
func writeMan(w io.Writer, root *cli.Command) {
	r := &roff{w: w}
	r.line(`.TH GIT-LIZA 1 "" "git-liza %s" "Git Manual"`, r.esc(buildVersion().Version))
	r.section("NAME")
	r.text("git-liza - " + root.Usage)
	r.section("SYNOPSIS")
	r.text(synopsis(root))
	r.section("DESCRIPTION")
	r.text("git-liza lets a team of AI coding agents (a Planner, Coders and Code Reviewers) work on one repository " +
		"through a shared blackboard, following the Liza multi-agent contract. The blackboard lives in git: every " +
		"change is one commit on refs/liza/state, moved by compare-and-swap; git log refs/liza/state is the audit log, " +
		"and pushing that ref shares the board across machines.")
	r.text("The acting agent comes from --agent ID, else LIZA_AGENT_ID; its role is the prefix of its id " +
		"(planner-N, coder-N, code-reviewer-N). With no agent id a command acts for the human operator. " +
		"Every command takes --json for machine output on standard output.")
	cats, byCat := groups(root)
	r.section("COMMANDS")
	for _, cat := range cats {
		r.line(".SS %q", strings.ToUpper(cat[:1])+cat[1:])
		for _, c := range byCat[cat] {
			r.command(c, c.Name)
			for _, sub := range visible(c) {
				r.command(sub, c.Name+" "+sub.Name)
			}
		}
	}
	r.section("GLOBAL OPTIONS")
	r.flags(flagDocs(root.VisibleFlags(), true))
	r.section("EXIT STATUS")
	for _, c := range []struct{ code, meaning string }{
		{"0", "success"},
		{"1", "validation or precondition failed: bad input, an illegal transition, a role not allowed"},
		{"2", "contention: the retry budget was spent while other writers kept moving the state"},
		{"3", "a git operation failed"},
		{"4", "the state at the ref does not parse or validate; nothing was written"},
		{"5", "a missing dependency: git absent or too old, the agent CLI a supervisor is told to run, or a system without what the command needs (run, agent and demo on Windows)"},
	} {
		r.item(c.code, c.meaning)
	}
	r.text("Errors are one line on standard error, starting git-liza:, followed by the command's usage for a mistake " +
		"on the command line; with --json, one JSON object {\"error\": ..., \"code\": N}.")
	r.section("ENVIRONMENT")
	r.item("LIZA_AGENT_ID", "the acting agent, when --agent is not given")
	r.item("LIZA_RETRY_BUDGET", "how long a command keeps retrying lost races (default 30s)")
	r.item("COLUMNS", "the width status fits its lines to")
	r.section("CONFIGURATION")
	r.item("liza.remote", "the remote whose refs/liza/state is the board (remote mode)")
	r.item("liza.statusFetch", "true: git liza status fetches the remote's board first, as --fetch does")
	r.item("liza.integrationBranch", "the branch approved work merges into (default: integration)")
	r.section("SYSTEMS")
	r.text("Linux and macOS run every command. On macOS supervisors wake through kqueue where Linux uses inotify, " +
		"and the checks of who holds a lock or works in a worktree read the process table through sysctl and lsof " +
		"where Linux reads /proc. Windows builds, but refuses run, agent and demo (exit 5: supervisors need POSIX " +
		"process groups and signals; use WSL), and never takes one of git's lock files for stale.")
	r.section("SEE ALSO")
	r.text("git(1), githooks(5), git-worktree(1); git liza help COMMAND")
}

// roff writes a manual page.
type roff struct{ w io.Writer }

func (r *roff) line(format string, a ...any) { fmt.Fprintf(r.w, format+"\n", a...) }

func (r *roff) section(name string) { r.line(".SH %s", name) }

func (r *roff) text(s string) {
	r.line(".PP")
	r.line("%s", r.esc(s))
}

func (r *roff) item(term, text string) {
	r.line(".TP")
	r.line(`\fB%s\fR`, r.esc(term))
	r.line("%s", r.esc(text))
}

func (r *roff) flags(docs []flagDoc) {
	for _, d := range docs {
		r.item(d.term, d.usage)
	}
}

func (r *roff) command(c *cli.Command, name string) {
	if len(visible(c)) > 0 {
		return // its subcommands follow, each with its own usage
	}
	r.line(".TP")
	r.line(`\fB%s\fR`, r.esc(synopsis(c)))
	r.line("%s", r.esc(capitalize(c.Usage)+"."))
	if note := platformNote(name); note != "" {
		r.line("%s", r.esc(note))
	}
	if docs := flagDocs(c.VisibleFlags(), false); len(docs) > 0 {
		r.line(".RS")
		r.flags(docs)
		r.line(".RE")
	}
	if h, _ := helpFor(name); len(h.examples) > 0 {
		r.line(".RS")
		r.line(".PP")
		r.line("Examples:")
		r.line(".nf")
		for _, ex := range h.examples {
			r.line("%s", r.esc(ex))
		}
		r.line(".fi")
		r.line(".RE")
	}
}

// esc makes s safe as roff text: backslashes and hyphens escaped, and no
// line starting with a control character.
func (r *roff) esc(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
