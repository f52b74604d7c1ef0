package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/refstore"
)

func (e *Env) logCmd() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "the audit log: every change of the blackboard, newest first",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "only changes of task `ID`"},
			&cli.StringFlag{Name: "agent", Local: true, Usage: "only changes made by agent `ID` (or human)"},
			&cli.IntFlag{Name: "n", Usage: "at most `N` entries"},
			atFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "log [--task ID] [--agent ID] [-n N]"); err != nil {
				return err
			}
			// --agent here filters the log; it does not say who acts.
			s, err := e.openAs(cmd, "")
			if err != nil {
				return err
			}
			task := cmd.String("task")
			if task != "" {
				if err := contracts.ValidTaskID(task); err != nil {
					return err
				}
			}
			return s.log(ctx, cmd.String("at"), task, cmd.String("agent"), cmd.Int("n"))
		},
	}
}

// LogEntry is one commit of refs/liza/state.
type LogEntry struct {
	Commit  string `json:"commit"`
	Time    string `json:"time"`
	Op      string `json:"op"`
	Agent   string `json:"agent"`
	Task    string `json:"task,omitempty"`
	Request string `json:"request,omitempty"`
	Subject string `json:"subject"`
	Author  string `json:"author"`
}

func (s *session) log(ctx context.Context, rev, task, who string, n int) error {
	snap, err := s.snapshot(ctx, rev)
	if err != nil {
		return err
	}
	var out []LogEntry
	for id := snap.Commit; !id.IsZero() && (n <= 0 || len(out) < n); {
		c, err := s.repo.ReadCommit(id)
		if err != nil {
			return err
		}
		e := logEntry(c)
		if (task == "" || e.Task == task) && (who == "" || e.Agent == who) {
			out = append(out, e)
		}
		if len(c.Parents) == 0 {
			break
		}
		id = c.Parents[0]
	}
	if s.json {
		if out == nil {
			out = []LogEntry{}
		}
		return s.printJSON(out)
	}
	for _, e := range out {
		fmt.Fprintf(s.Stdout, "%s %s %-16s %s\n", e.Commit[:12], e.Time, e.Agent, e.Subject)
	}
	return nil
}

func logEntry(c *refstore.Commit) LogEntry {
	subject, _, _ := strings.Cut(c.Message, "\n")
	tr := cas.Trailers(c.Message)
	return LogEntry{
		Commit:  c.ID.String(),
		Time:    contracts.FormatTime(c.Author.When),
		Op:      tr["Liza-Op"],
		Agent:   tr["Liza-Agent"],
		Task:    tr["Liza-Task"],
		Request: tr["Liza-Request"],
		Subject: subject,
		Author:  c.Author.Name,
	}
}
