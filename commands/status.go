package commands

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
)

// defaultLimit is how many tasks of one status status lists before it
// sums up the rest.
const defaultLimit = 10

func (e *Env) statusCmd() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "the board: what needs attention first, agents and their leases, sprint, kill switches, alarms",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "fetch", Usage: "in remote mode: fetch the remote's board first (git config liza.statusFetch true: always)"},
			&cli.StringSliceFlag{Name: "status", Usage: "only tasks in these statuses (`S`,S)"},
			&cli.StringFlag{Name: "agent", Local: true, Usage: "only tasks assigned to or reviewed by agent `ID`"},
			&cli.BoolFlag{Name: "mine", Usage: "only the tasks of the acting agent (git liza --agent ID status --mine, or LIZA_AGENT_ID)"},
			&cli.IntFlag{Name: "limit", Value: defaultLimit, Usage: "list at most `N` tasks of each status (with --ready, at most N) and sum up the rest (0: all; --json lists all unless it is given)"},
			&cli.BoolFlag{Name: "ready", Usage: "only what can be claimed now, in the order claim takes it (for the acting coder with --agent ID)"},
			atFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "status"); err != nil {
				return err
			}
			if cmd.Bool("ready") {
				return e.ready(ctx, cmd)
			}
			// --agent here filters the board; it does not say who acts.
			s, err := e.openAs(cmd, "")
			if err != nil {
				return err
			}
			r := ops.StatusRequest{Rev: cmd.String("at"), Fetch: cmd.Bool("fetch") || configTrue(s, "liza.statusFetch")}
			for _, st := range splitList(cmd.StringSlice("status")) {
				status := contracts.Status(strings.ToUpper(st))
				if !status.Known() {
					return contracts.Invalidf("--status %s: not a task status (%s)", st, statusNames())
				}
				r.Statuses = append(r.Statuses, status)
			}
			r.Agent = cmd.String("agent")
			if cmd.Bool("mine") {
				if r.Agent != "" {
					return contracts.Invalidf("--mine and --agent both name whose tasks to show: pass one")
				}
				if r.Agent = cmd.Root().String("agent"); r.Agent == "" {
					return contracts.Invalidf("--mine needs the acting agent: git liza --agent ID status --mine, or LIZA_AGENT_ID")
				}
			}
			limit, err := limitOf(cmd)
			if err != nil {
				return err
			}
			// --json lists every task unless --limit is given.
			if !s.json || cmd.IsSet("limit") {
				r.Limit = limit
			}
			b, err := s.ops.Status(ctx, r)
			if err != nil {
				return err
			}
			if b.Unverified != "" {
				fmt.Fprintf(e.Stderr, "git-liza: warning: %s\n", contracts.Printable(b.Unverified))
			}
			if s.json {
				if r.Limit > 0 {
					b.Page(r.Limit, len(r.Statuses) > 0)
				}
				return s.printJSON(b)
			}
			var out bytes.Buffer
			writeBoard(&out, b, r, limit)
			return writeFitted(e.Stdout, out.String(), e.width())
		},
	}
}

func configTrue(s *session, key string) bool {
	v, _ := s.repo.Config(key)
	return strings.EqualFold(v, "true") || v == "1" || strings.EqualFold(v, "yes")
}

func statusNames() string {
	var names []string
	for _, s := range contracts.Statuses {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// writeFitted writes text cut line by line to width columns. The text's
// fields were made printable one by one; this pass over the whole is the
// net under a field a later change forgets (a no-op otherwise).
func writeFitted(w io.Writer, text string, width int) error {
	text = contracts.PrintableText(text)
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		nl := strings.HasSuffix(line, "\n")
		b.WriteString(fit(strings.TrimRight(strings.TrimSuffix(line, "\n"), " "), width))
		if nl {
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeBoard writes the board for a person: the goal and sprint, then the
// tasks in attention order, at most limit of each status (0: all; the
// statuses that are over only as a count, unless asked for), agents, kill
// switches and alarms.
func writeBoard(w io.Writer, b *ops.Board, r ops.StatusRequest, limit int) {
	// Every text on the board may come from an agent (a description, a
	// reason) or from a crafted state (a name, a status): each goes
	// through p, so that none reaches the terminal raw or breaks a line.
	p := contracts.Printable
	now, _ := contracts.ParseTime(b.Now)
	fmt.Fprintf(w, "Goal %s [%s]\n", p(b.Goal), p(b.GoalStatus))
	fmt.Fprintf(w, "Sprint %s [%s]  mode %s  integration branch %s\n", p(b.Sprint), p(b.SprintStatus), p(b.Mode), p(b.IntegrationBranch))
	if rm := b.Remote; rm != nil {
		fmt.Fprintf(w, "%s\n", p(remoteLine(rm, now)))
	}
	if u := b.Unpublished; u != nil {
		fmt.Fprintf(w, "%s\n", p(unpublishedLine(u, b.Remote != nil)))
	}
	if b.Spend != nil {
		fmt.Fprintf(w, "%s\n", b.Spend.Line())
	}
	var counts []string
	for _, status := range contracts.Statuses {
		if n := b.Counts[status]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", status, n))
		}
	}
	for status, n := range b.Counts {
		if !status.Known() {
			counts = append(counts, fmt.Sprintf("%s %d", p(string(status)), n))
		}
	}
	fmt.Fprintf(w, "\nTasks: %d", b.Total)
	if len(counts) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(counts, ", "))
	}
	if b.Archived > 0 {
		fmt.Fprintf(w, ", %d archived", b.Archived)
	}
	if filtered := len(r.Statuses) > 0 || r.Agent != ""; filtered {
		fmt.Fprintf(w, "; %d shown", len(b.Tasks))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	parked := false
	for _, sec := range b.Sections() {
		asked := len(r.Statuses) > 0
		if sec.Status.Terminal() && !asked {
			fmt.Fprintf(tw, "  %s %d: git liza status --status %s\n", sec.Status, len(sec.Tasks), sec.Status)
			continue
		}
		fmt.Fprintf(tw, "  %s %d\n", p(string(sec.Status)), len(sec.Tasks))
		for i, t := range sec.Tasks {
			if limit > 0 && i == limit {
				fmt.Fprintf(tw, "    … %d more: git liza status --status %s --limit 0\n", len(sec.Tasks)-limit, p(string(sec.Status)))
				break
			}
			who := t.AssignedTo
			if t.ReviewingBy != "" {
				who += " / " + t.ReviewingBy
			}
			text := t.Description
			if t.Reason != "" {
				text = t.Reason
			}
			if w := waitsText(t.WaitsOn); w != "" {
				text = w + " · " + text
			}
			fmt.Fprintf(tw, "    %s\tp%d\t%s\t%s\t%s\n", p(t.ID), t.Priority, p(who), p(t.LeaseText(now)), p(contracts.OneLine(text)))
			parked = parked || t.Parked != nil
		}
	}
	tw.Flush()
	if parked {
		fmt.Fprintf(w, "  parked: its supervisor stopped cleanly; %s, or another coder takes it over with its work\n", contracts.ResumeHint)
	}
	if len(b.Agents) > 0 {
		fmt.Fprintf(w, "\nAgents: %d\n", len(b.Agents))
		for _, a := range b.Agents {
			// The role as a person reads it (code-reviewer); --json keeps
			// the state's spelling (code_reviewer, seed 004).
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p(a.ID), p(contracts.Role(a.Role).IDPrefix()), p(a.Status), p(a.CurrentTask), ops.LeaseLeft(a.LeaseExpires, now))
		}
		tw.Flush()
	}
	if b.Anomalies > 0 {
		fmt.Fprintf(w, "\nAnomalies: %d (git liza show --json | jq .anomalies)\n", b.Anomalies)
	}
	if len(b.Switches) > 0 {
		fmt.Fprintf(w, "\nKill switches: %d\n", len(b.Switches))
		for _, sw := range b.Switches {
			cells := []string{p(sw.Mode), p(sw.Source), "since unknown"}
			if !sw.Since.IsZero() {
				cells[2] = "since " + contracts.FormatTime(sw.Since)
			}
			if sw.By != "" {
				cells = append(cells, "by "+p(sw.By))
			}
			if sw.Reason != "" {
				cells = append(cells, p(sw.Reason))
			}
			fmt.Fprintf(tw, "  %s\n", strings.Join(cells, "\t"))
		}
		tw.Flush()
	}
	if q := b.Queue; q != nil {
		writeQueue(w, q)
	}
	if len(b.Alarms) > 0 {
		fmt.Fprintf(w, "\nAlarms: %d\n", len(b.Alarms))
		for _, a := range b.Alarms {
			fmt.Fprintf(w, "  %s\n", p(a.Message))
		}
	}
}

// waitsText is "waits on api (CLAIMED), cli (UNCLAIMED)", or "".
func waitsText(ws []ops.Waiting) string {
	if len(ws) == 0 {
		return ""
	}
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = fmt.Sprintf("%s (%s)", w.ID, w.Status)
	}
	return "waits on " + strings.Join(parts, ", ")
}

// ready is status --ready: the tasks the acting coder (--agent ID, or any
// coder) could claim now, best first, one line each.
func (e *Env) ready(ctx context.Context, cmd *cli.Command) error {
	if len(cmd.StringSlice("status")) > 0 || cmd.String("agent") != "" || cmd.Bool("mine") || cmd.String("at") != "" {
		return contracts.Invalidf("--ready lists what can be claimed now: it takes no --status, --agent, --mine or --at")
	}
	s, err := e.openAs(cmd, cmd.Root().String("agent"))
	if err != nil {
		return err
	}
	limit, err := limitOf(cmd)
	if err != nil {
		return err
	}
	if s.json && !cmd.IsSet("limit") {
		limit = 0 // --json lists them all unless --limit is given
	}
	tasks, more, err := s.ops.Ready(ctx, limit)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(tasks)
	}
	var out bytes.Buffer
	writeReady(&out, tasks)
	if more > 0 {
		who := ""
		if a := cmd.Root().String("agent"); a != "" {
			who = "--agent " + contracts.Printable(a) + " "
		}
		fmt.Fprintf(&out, "  … %d more: git liza %sstatus --ready --limit 0\n", more, who)
	}
	return writeFitted(e.Stdout, out.String(), e.width())
}

// limitOf is --limit: how many tasks to list, 0 for all.
func limitOf(cmd *cli.Command) (int, error) {
	limit := int(cmd.Int("limit"))
	if limit < 0 {
		return 0, contracts.Invalidf("--limit %d: give 0 (all) or more", limit)
	}
	return limit, nil
}

// writeReady writes status --ready's lines: id, priority, status, the
// coder a takeover displaces, the description.
func writeReady(w io.Writer, tasks []ops.ReadyTask) {
	if len(tasks) == 0 {
		fmt.Fprintln(w, "nothing can be claimed now")
		return
	}
	p := contracts.Printable
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, t := range tasks {
		fmt.Fprintf(tw, "%s\tp%d\t%s\t%s\t%s\n", p(t.ID), t.Priority, p(string(t.Status)), p(t.AssignedTo), p(contracts.OneLine(t.Description)))
	}
	tw.Flush()
}

// remoteLine says whose copy a board in remote mode is and how old it is.
func remoteLine(rm *ops.BoardRemote, now time.Time) string {
	var s string
	switch at, err := contracts.ParseTime(rm.FetchedAt); {
	case rm.Fetched:
		s = fmt.Sprintf("Board of %s, fetched now", rm.Name)
	case rm.FetchedAt == "" || err != nil:
		s = fmt.Sprintf("Board of %s as this clone last saw it (never fetched here); git liza status --fetch fetches it", rm.Name)
	default:
		s = fmt.Sprintf("Board of %s as fetched %s (%s ago); git liza status --fetch refreshes it", rm.Name, rm.FetchedAt, now.Sub(at).Round(time.Second))
	}
	return s
}

// unpublishedLine says how many operations exist only here, and the sync
// that publishes them: git liza sync in remote mode, naming the remote in
// a copy kept here.
func unpublishedLine(u *ops.Unpublished, remoteMode bool) string {
	ops := contracts.Plural(u.Operations, "operation")
	if remoteMode {
		return ops + " not published: git liza sync"
	}
	return fmt.Sprintf("%s not published to %s: git liza sync %s", ops, u.Remote, u.Remote)
}

// writeQueue writes the merge queue: the batch under test, the approved
// tasks in the order they merge next, those that wait for a dependency,
// and the tasks the queue failed, with why.
func writeQueue(w io.Writer, q *ops.QueueView) {
	p := contracts.Printable
	ids := func(l []string) string { return p(strings.Join(l, ", ")) }
	fmt.Fprintf(w, "\nmerge queue (batches of %d):\n", q.MergeBatch)
	if len(q.Batch) > 0 {
		testing := ""
		if len(q.Testing) > 0 {
			testing = fmt.Sprintf(", testing %s", ids(q.Testing))
		}
		fmt.Fprintf(w, "  batch under test: %s%s (since %s, %s)\n", ids(q.Batch), testing, p(q.Since), p(q.Owner))
	}
	if len(q.Waiting) > 0 {
		fmt.Fprintf(w, "  next: %s\n", ids(q.Waiting))
	}
	for _, b := range q.Blocked {
		fmt.Fprintf(w, "  waiting for a dependency: %s (until %s)\n", p(b.ID), ids(b.Until))
	}
	for _, o := range q.Out {
		fmt.Fprintf(w, "  failed: %s: %s\n", p(o.ID), p(o.Reason))
	}
}
