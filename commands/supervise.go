package commands

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// superviseCmd holds the blackboard steps of a supervisor's own life:
// registration, stopping and completing the goal. git liza agent runs
// them; they are commands so that they go through the same permission
// checks and compare-and-swap as every other step.
func (e *Env) superviseCmd() *cli.Command {
	return &cli.Command{
		Name:   "supervise",
		Usage:  "a supervisor's own steps (used by git liza agent)",
		Hidden: true,
		Commands: []*cli.Command{
			{
				Name:  "register",
				Usage: "register the agent id for a supervisor and print its generation",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "replace", Usage: "take the id from a supervisor that still holds it"}},
				Action: e.action(0, 0, "supervise register [--replace]", func(ctx context.Context, s *session, _ []string) error {
					return s.register(ctx, s.cmd.Bool("replace"))
				}),
			},
			{
				Name:  "exit",
				Usage: "end a supervisor's registration, releasing what it holds",
				Action: e.action(0, 0, "supervise exit", func(ctx context.Context, s *session, _ []string) error {
					return s.unregister(ctx)
				}),
			},
			{
				Name:  "complete",
				Usage: "mark the goal and the sprint COMPLETED once every task is terminal",
				Action: e.action(0, 0, "supervise complete", func(ctx context.Context, s *session, _ []string) error {
					return s.complete(ctx)
				}),
			},
		},
	}
}

// registration is what supervise register reports.
type registration struct {
	Agent      string `json:"agent"`
	Generation int    `json:"generation"`
	Replaced   string `json:"replaced,omitempty"`
	Lease      string `json:"supervisor_lease"`
}

// register gives the agent id to a new supervisor with the next
// generation. A supervisor that still holds the id (its supervisor lease
// has not ended) keeps it unless replace is set; the replaced one is then
// stale and every write it tries is refused.
func (s *session) register(ctx context.Context, replace bool) error {
	if s.agent == "" {
		return contracts.Invalidf("supervise register needs an agent id (--agent or LIZA_AGENT_ID)")
	}
	role, _ := contracts.ParseAgentID(s.agent)
	host, _ := os.Hostname()
	res, err := s.update(ctx, cas.Op{Name: contracts.OpRegister, Apply: func(tx *cas.Tx) (any, error) {
		_, lease, err := tx.Lease()
		if err != nil {
			return nil, err
		}
		a, err := tx.Agent(s.agent)
		if err != nil {
			return nil, err
		}
		out := registration{Agent: s.agent, Lease: lease}
		if a == nil {
			a = &contracts.Agent{Role: string(role), Status: "IDLE"}
		} else if a.SupervisorLease != "" {
			end, err := contracts.ParseTime(a.SupervisorLease)
			if err == nil && end.After(tx.Now) {
				if !replace {
					return nil, contracts.Invalidf("%s is already supervised (generation %d on %s, until %s); stop that supervisor, or take the id with --replace", s.agent, a.Generation, a.Host, a.SupervisorLease)
				}
				out.Replaced = fmt.Sprintf("generation %d on %s", a.Generation, a.Host)
			}
		}
		// A supervisor that stopped cleanly retired its generation on the way
		// out (see unregister) and left no host: the next registration takes
		// the number it moved on to. Otherwise the generation moves on now,
		// so that whatever still runs under the old one is refused.
		if a.Generation == 0 || a.Host != "" {
			a.Generation++
		}
		a.Started, a.Heartbeat = tx.NowString(), tx.NowString()
		a.Host = fmt.Sprintf("%s pid %d", host, os.Getpid())
		a.SupervisorLease, a.LeaseExpires = lease, lease
		if a.Status == "" {
			a.Status = "IDLE"
		}
		tx.PutAgent(s.agent, a)
		out.Generation = a.Generation
		subject := fmt.Sprintf("register %s (generation %d)", s.agent, a.Generation)
		if out.Replaced != "" {
			subject += ", replacing " + out.Replaced
		}
		tx.Describe(subject, "")
		return out, nil
	}})
	if err != nil {
		return err
	}
	out, err := decodeResult[registration](res)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	fmt.Fprintf(s.Stdout, "%s registered, generation %d\n", out.Agent, out.Generation)
	return nil
}

// unregister ends a supervisor's registration. What its agent held is let
// go without losing work: a coder's claim keeps its worktree and branch
// but its lease ends now, so any coder may take the task over; a
// review is released. The generation moves on, so that an agent process
// the supervisor left behind can no longer write as the agent.
func (s *session) unregister(ctx context.Context) error {
	if s.agent == "" {
		return contracts.Invalidf("supervise exit needs an agent id (--agent or LIZA_AGENT_ID)")
	}
	res, err := s.update(ctx, cas.Op{Name: contracts.OpRegister, Apply: func(tx *cas.Tx) (any, error) {
		a, err := tx.Agent(s.agent)
		if err != nil {
			return nil, err
		}
		if a == nil {
			return nil, contracts.Invalidf("%s is not registered", s.agent)
		}
		idx, err := tx.Index()
		if err != nil {
			return nil, err
		}
		var released []string
		for _, sum := range idx {
			coder := sum.AssignedTo == s.agent && sum.Status == contracts.Claimed
			reviewer := sum.ReviewingBy == s.agent && sum.Status == contracts.ReadyForReview
			if !coder && !reviewer {
				continue
			}
			t, err := tx.MustTask(sum.ID)
			if err != nil {
				return nil, err
			}
			ev := &contracts.HistoryEvent{Time: tx.NowString(), Agent: s.agent}
			if coder {
				t.LeaseExpires = tx.NowString()
				ev.Event, ev.Reason = "lease_released", "supervisor of "+s.agent+" stopped; the task may be taken over with its work"
			} else {
				t.ReviewingBy, t.ReviewLeaseExpires = "", ""
				ev.Event, ev.Reason = "review_released", "supervisor of "+s.agent+" stopped"
			}
			t.History = append(t.History, ev)
			tx.PutTask(t)
			released = append(released, t.ID)
		}
		ended := a.Generation
		a.Status, a.CurrentTask = "IDLE", ""
		a.SupervisorLease, a.LeaseExpires, a.Host = "", "", ""
		a.Generation++
		tx.PutAgent(s.agent, a)
		tx.Describe(fmt.Sprintf("supervisor of %s stopped (generation %d)", s.agent, ended), "")
		if released == nil {
			released = []string{}
		}
		return map[string]any{"agent": s.agent, "released": released}, nil
	}})
	if err != nil {
		return err
	}
	if s.json {
		_, err := s.Stdout.Write(append(res.Value, '\n'))
		return err
	}
	fmt.Fprintf(s.Stdout, "%s unregistered\n", s.agent)
	return nil
}

// complete marks the goal and the sprint COMPLETED. It is refused while a
// task is not terminal.
func (s *session) complete(ctx context.Context) error {
	_, err := s.update(ctx, cas.Op{Name: contracts.OpSprint, Apply: func(tx *cas.Tx) (any, error) {
		m, err := tx.Meta()
		if err != nil {
			return nil, err
		}
		if m.Goal.Status == "COMPLETED" {
			return nil, nil
		}
		idx, err := tx.Index()
		if err != nil {
			return nil, err
		}
		var statuses []contracts.Status
		ids := slices.Collect(maps.Keys(idx))
		sort.Slice(ids, func(i, j int) bool { return contracts.NaturalLess(ids[i], ids[j]) })
		for _, id := range ids {
			t := idx[id]
			if !t.Status.Terminal() {
				return nil, contracts.Invalidf("task %s is %s: the goal is not complete", t.ID, t.Status)
			}
			statuses = append(statuses, t.Status)
		}
		archived, err := tx.ArchivedIDs()
		if err != nil {
			return nil, err
		}
		for _, id := range archived {
			t, err := tx.ArchivedTask(id)
			if err != nil {
				return nil, err
			}
			if t != nil {
				statuses = append(statuses, t.Status)
			}
		}
		if !contracts.TasksComplete(statuses) {
			return nil, contracts.Invalidf("no task was merged: the goal is not complete")
		}
		now := tx.NowString()
		m.Goal.Status, m.Goal.Completed = "COMPLETED", now
		m.Sprint.Status, m.Sprint.Timeline.Ended = "COMPLETED", now
		tx.PutMeta(m)
		tx.Describe(fmt.Sprintf("goal %s completed", m.Goal.ID), "")
		return nil, nil
	}})
	if err != nil {
		return err
	}
	fmt.Fprintln(s.Stdout, "goal completed")
	return nil
}
