package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

func (e *Env) heartbeatCmd() *cli.Command {
	return &cli.Command{
		Name:  "heartbeat",
		Usage: "keep your leases alive (writes only when a lease is past half its term)",
		Action: e.action(0, 0, "heartbeat", func(ctx context.Context, s *session, _ []string) error {
			return s.heartbeat(ctx)
		}),
	}
}

// heartbeat extends the caller's task and review leases. Liveness stays in
// the state, where every clone sees it and the compare-and-swap guards it,
// but a lease is renewed only once it is past half its term: at most two
// commits per agent per lease period (one an hour per agent with the
// default 30-minute lease), however often the heartbeat runs.
func (s *session) heartbeat(ctx context.Context) error {
	res, err := s.update(ctx, cas.Op{Name: contracts.OpHeartbeat, Apply: func(tx *cas.Tx) (any, error) {
		term, lease, err := tx.Lease()
		if err != nil {
			return nil, err
		}
		due := func(expires string) bool { return cas.LeaseDue(expires, tx.Now, term) }
		idx, err := tx.Index()
		if err != nil {
			return nil, err
		}
		var held, renewed []string
		for _, sum := range idx {
			coder := sum.AssignedTo == s.agent && (sum.Status == contracts.Claimed || sum.Status == contracts.ReadyForReview || sum.Status == contracts.Rejected || sum.Status == contracts.IntegrationFailed)
			reviewer := sum.ReviewingBy == s.agent && sum.Status == contracts.ReadyForReview
			if !coder && !reviewer {
				continue
			}
			held = append(held, sum.ID)
			if !(coder && due(sum.LeaseExpires)) && !(reviewer && due(sum.ReviewLeaseExpires)) {
				continue
			}
			t, err := tx.MustTask(sum.ID)
			if err != nil {
				return nil, err
			}
			if coder {
				t.LeaseExpires = lease
			}
			if reviewer {
				t.ReviewLeaseExpires = lease
			}
			tx.PutTask(t)
			renewed = append(renewed, sum.ID)
		}
		if a, err := tx.Agent(s.agent); err != nil {
			return nil, err
		} else if a != nil && (len(renewed) > 0 || due(a.LeaseExpires) || a.SupervisorLease != "" && due(a.SupervisorLease)) {
			a.Heartbeat, a.LeaseExpires = tx.NowString(), lease
			if a.SupervisorLease != "" {
				a.SupervisorLease = lease
			}
			tx.PutAgent(s.agent, a)
			renewed = append(renewed, "")
		}
		if len(renewed) > 0 {
			tx.Describe(fmt.Sprintf("heartbeat (%s)", s.agent), "")
		}
		return map[string]any{"held": held, "renewed": len(renewed) > 0, "lease_expires": lease}, nil
	}})
	if err != nil {
		return err
	}
	var out struct {
		Held         []string `json:"held"`
		Renewed      bool     `json:"renewed"`
		LeaseExpires string   `json:"lease_expires"`
	}
	if err := json.Unmarshal(res.Value, &out); err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	switch {
	case out.Renewed:
		fmt.Fprintf(s.Stdout, "leases of %s renewed until %s (%s)\n", s.agent, out.LeaseExpires, strings.Join(out.Held, ", "))
	case len(out.Held) == 0:
		fmt.Fprintf(s.Stdout, "%s holds no lease\n", s.agent)
	default:
		fmt.Fprintf(s.Stdout, "leases of %s are fresh (%s); nothing written\n", s.agent, strings.Join(out.Held, ", "))
	}
	return nil
}

func (e *Env) checkpointCmd() *cli.Command {
	return &cli.Command{
		Name:      "checkpoint",
		Usage:     "record the pre-execution checkpoint before working on a task",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "intent", Usage: "what you will do, specific and observable"},
			&cli.StringFlag{Name: "validation", Usage: "how you will check it: a command and its expected output"},
			&cli.StringSliceFlag{Name: "files", Usage: "files to modify (A,B)"},
			&cli.StringSliceFlag{Name: "assumption", Usage: "an assumption (repeatable)"},
			&cli.StringFlag{Name: "risks", Usage: "what could go wrong"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 1, 1, "checkpoint ID --intent TEXT --validation TEXT --files A,B [--assumption TEXT ...] [--risks TEXT]")
			if err != nil {
				return err
			}
			cp := &contracts.Checkpoint{
				Intent: strings.TrimSpace(cmd.String("intent")), Validation: strings.TrimSpace(cmd.String("validation")),
				FilesToModify: splitList(cmd.StringSlice("files")), Assumptions: cmd.StringSlice("assumption"), Risks: cmd.String("risks"),
			}
			for _, f := range []struct{ flag, val string }{{"--intent", cp.Intent}, {"--validation", cp.Validation}, {"--files", strings.Join(cp.FilesToModify, "")}} {
				if f.val == "" {
					return contracts.Invalidf("a checkpoint needs %s", f.flag)
				}
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			return s.coderStep(ctx, contracts.OpCheckpoint, a[0], "checkpoint recorded", func(tx *cas.Tx, t *contracts.Task) error {
				t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "pre_execution_checkpoint", Agent: s.agent, Checkpoint: cp})
				t.HandoffPending = false
				return nil
			})
		},
	}
}

func (e *Env) handoffCmd() *cli.Command {
	return &cli.Command{
		Name:      "handoff",
		Usage:     "hand a task over at context exhaustion: what state it is in and what to do next",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "summary", Usage: "one phrase: the task's state"},
			&cli.StringFlag{Name: "next", Usage: "one phrase: what the replacement should do first"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 1, 1, "handoff ID --summary TEXT --next TEXT")
			if err != nil {
				return err
			}
			summary, next := strings.TrimSpace(cmd.String("summary")), strings.TrimSpace(cmd.String("next"))
			if summary == "" || next == "" {
				return contracts.Invalidf("a handoff needs --summary and --next")
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			return s.coderStep(ctx, contracts.OpHandoff, a[0], "handed off", func(tx *cas.Tx, t *contracts.Task) error {
				t.HandoffPending = true
				t.History = append(t.History, &contracts.HistoryEvent{Time: tx.NowString(), Event: "handoff", Agent: s.agent, Reason: summary})
				tx.PutHandoff(t.ID, &contracts.Handoff{Agent: s.agent, Time: tx.NowString(), Summary: summary, NextAction: next})
				return setAgent(tx, s.agent, contracts.RoleCoder, "HANDOFF", t.ID, t.LeaseExpires)
			})
		},
	}
}

// coderStep runs a step the assignee of a CLAIMED task takes on it.
func (s *session) coderStep(ctx context.Context, op contracts.Op, id, verb string, step func(tx *cas.Tx, t *contracts.Task) error) error {
	if err := contracts.ValidTaskID(id); err != nil {
		return err
	}
	res, err := s.update(ctx, cas.Op{Name: op, Apply: func(tx *cas.Tx) (any, error) {
		t, err := tx.MustTask(id)
		if err != nil {
			return nil, err
		}
		if err := checkSubmitter(t, s.agent); err != nil {
			return nil, err
		}
		if err := step(tx, t); err != nil {
			return nil, err
		}
		tx.PutTask(t)
		tx.Describe(fmt.Sprintf("%s %s (%s)", op, id, s.agent), id)
		return nil, nil
	}})
	if err != nil {
		return err
	}
	return s.report(res, id, contracts.Claimed, verb)
}

func isDir(p string) (bool, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, nil
	}
	return fi.IsDir(), nil
}
