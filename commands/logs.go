package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
	"github.com/liza-dev/git-liza/transcript"
)

const logsUsage = "logs [TASK | AGENT] [--session N] [-f] [--json]"

func (e *Env) logsCmd() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "the agents' sessions: list them, or show one step by step (-f follows a live one)",
		ArgsUsage: "[TASK | AGENT]",
		Description: "With no argument, lists the sessions, oldest first, numbered from 1. With a task or an agent\n" +
			"id, shows its latest session (or --session N of the list): one line per step, tool errors\n" +
			"marked, long text cut with its size. -f follows the session as it is written and ends with it.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "session", Usage: "session `N` as the list numbers it"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "follow the session as it is written, until it ends"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 0, 1, logsUsage)
			if err != nil {
				return err
			}
			// The list reads every log whole: the collector runs as for a
			// long command, not only near the short ones' memory limit.
			longLived()
			who := ""
			if len(a) == 1 {
				who = a[0]
				if _, aerr := contracts.ParseAgentID(who); aerr != nil && contracts.ValidTaskID(who) != nil {
					return contracts.Invalidf("%s is neither a task id nor an agent id (planner-N, coder-N, code-reviewer-N)", contracts.Printable(who))
				}
			}
			repo, err := refstore.Open(e.Dir)
			if err != nil {
				return err
			}
			root := repo.MainWorkTree()
			if root == "" {
				root = filepath.Dir(repo.CommonDir)
			}
			l := &logsView{out: e.Stdout, root: root, json: cmd.Bool("json")}
			sessions, err := transcript.List(filepath.Join(repo.CommonDir, "liza", "logs", "sessions"))
			if err != nil {
				return err
			}
			n := int(cmd.Int("session"))
			if who == "" && n == 0 && !cmd.Bool("follow") {
				if err := transcript.LoadAll(sessions); err != nil {
					return contracts.Invalidf("reading the session logs: %v", err)
				}
				return l.list(sessions)
			}
			s, err := pickSession(sessions, who, n)
			if err != nil {
				return err
			}
			if cmd.Bool("follow") {
				ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
				return l.follow(ctx, s)
			}
			return l.show(s)
		},
	}
}

// pickSession is the session of who (a task or an agent id; "" for any):
// number n of the list, which must be who's, or else who's latest. An id
// spelled as agent ids are (coder-1) names the agent: a task given such an
// id is reached by its number.
func pickSession(sessions []transcript.Session, who string, n int) (transcript.Session, error) {
	_, err := contracts.ParseAgentID(who)
	agent := who != "" && err == nil
	of := func(s transcript.Session) bool {
		switch {
		case who == "":
			return true
		case agent:
			return s.Header.Agent == who
		}
		return s.Header.Task == who || s.Header.Label == who // "planning": the planner's
	}
	if n != 0 {
		if n < 0 || n > len(sessions) {
			return transcript.Session{}, contracts.Invalidf("no session %d: git liza logs lists %d", n, len(sessions))
		}
		s := sessions[n-1]
		if !of(s) {
			return s, contracts.Invalidf("session %d is %s's on %s, not a session of %s", n, contracts.Printable(s.Header.Agent), contracts.Printable(s.Header.Label), who)
		}
		return s, nil
	}
	for i := len(sessions) - 1; i >= 0; i-- {
		if of(sessions[i]) {
			return sessions[i], nil
		}
	}
	if who == "" {
		return transcript.Session{}, contracts.Invalidf("no session yet: the supervisors write one per agent run")
	}
	return transcript.Session{}, contracts.Invalidf("no session of %s (git liza logs lists them)", who)
}

// logsView prints sessions and their steps, for people or as JSON lines.
type logsView struct {
	out  io.Writer
	root string // paths are shown relative to it
	json bool
}

// rel is path relative to the project root, when it is under it.
func (l *logsView) rel(path string) string {
	if r, err := filepath.Rel(l.root, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

// sessionJSON is a session as logs --json lists it.
type sessionJSON struct {
	N       int                 `json:"n"`
	Agent   string              `json:"agent"`
	Task    string              `json:"task,omitempty"`
	Label   string              `json:"label"`
	Session int                 `json:"session"`
	CLI     string              `json:"cli"`
	Started time.Time           `json:"started"`
	Seconds int                 `json:"seconds"`
	Outcome string              `json:"outcome"`
	Steps   int                 `json:"steps"`
	Usage   transcript.Usage    `json:"usage"`
	Failure *transcript.Failure `json:"failure,omitempty"`
	Path    string              `json:"path"`
}

// outcome is how a session ended, "open" while it has no end record (it
// runs, or its supervisor died before writing one).
func outcome(s transcript.Session) string {
	if s.End == nil {
		return "open"
	}
	return s.End.Outcome
}

// seconds is how long a session took, or has run so far.
func seconds(s transcript.Session) int {
	if s.End != nil {
		return s.End.Seconds
	}
	return int(max(0, s.Last.Sub(s.Header.Started).Seconds()))
}

func (l *logsView) list(sessions []transcript.Session) error {
	if !l.json && len(sessions) == 0 {
		fmt.Fprintln(l.out, "no session yet")
		return nil
	}
	p := contracts.Printable
	for _, s := range sessions {
		h := s.Header
		if l.json {
			l.printJSON(sessionJSON{N: s.N, Agent: h.Agent, Task: h.Task, Label: h.Label, Session: h.Session, CLI: h.CLI,
				Started: h.Started, Seconds: seconds(s), Outcome: outcome(s), Steps: s.Summary.Steps, Usage: s.Summary.Usage,
				Failure: s.Summary.Failure, Path: l.rel(s.Path)})
			continue
		}
		u := s.Summary.Usage
		fmt.Fprintf(l.out, "%3d  %-15s %-14s %s %7s  %-9s %5d steps %9s tokens  %s\n", s.N, p(h.Agent), p(h.Label),
			h.Started.Local().Format("2006-01-02 15:04:05"), (time.Duration(seconds(s)) * time.Second).String(),
			p(outcome(s)), s.Summary.Steps, contracts.Thousands(u.InputTokens+u.OutputTokens), p(l.rel(s.Path)))
	}
	return nil
}

// head is the line above a session's steps: who, on what, with which CLI,
// since when, and where its log is.
func (l *logsView) head(s transcript.Session, h transcript.Header) string {
	p := contracts.Printable
	return fmt.Sprintf("session %d: %s on %s, %s session %d, started %s (log %s)", s.N, p(h.Agent), p(h.Label), p(h.CLI), h.Session,
		h.Started.Local().Format("2006-01-02 15:04:05"), p(l.rel(s.Path)))
}

// step prints one step: its time and transcript.Render's line, or a JSON
// line.
func (l *logsView) step(st transcript.Step) {
	if l.json {
		l.printJSON(st)
		return
	}
	fmt.Fprintf(l.out, "%s %s\n", st.T.Local().Format("15:04:05"), transcript.Render(st, stepWidth))
}

// printJSON prints v as one JSON line (<, > and & as they are).
func (l *logsView) printJSON(v any) {
	enc := json.NewEncoder(l.out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// stepWidth is how much of a step's text a line shows.
const stepWidth = 160

func (l *logsView) show(s transcript.Session) error {
	ended := false
	err := transcript.EachStep(s.Path, func(h transcript.Header) {
		if !l.json {
			fmt.Fprintln(l.out, l.head(s, h))
		}
	}, func(st transcript.Step) {
		ended = ended || st.Kind == transcript.KindEnd
		l.step(st)
	})
	if err != nil {
		return contracts.Invalidf("%s: %v", l.rel(s.Path), err)
	}
	if !ended && !l.json {
		fmt.Fprintln(l.out, "(no end yet: the session runs, or its supervisor stopped without writing one; -f follows it)")
	}
	return nil
}

// follow prints the session's steps as they are written, from its first,
// until its end record (or Ctrl-C).
func (l *logsView) follow(ctx context.Context, s transcript.Session) error {
	var p *transcript.Parser
	err := transcript.Follow(ctx, s.Path, func(r transcript.Record) {
		if r.Header != nil {
			p = transcript.NewParser(r.Header.Format)
			if !l.json {
				fmt.Fprintln(l.out, l.head(s, *r.Header))
			}
			return
		}
		for _, st := range p.Record(r) {
			l.step(st)
		}
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	if err != nil {
		return contracts.Invalidf("%s: %v", l.rel(s.Path), err)
	}
	return nil
}
