package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// controlCmds are the kill switches: pause, resume and abort.
func (e *Env) controlCmds() []*cli.Command {
	reason := &cli.StringFlag{Name: "reason", Usage: "why, for the agents and the audit log"}
	return []*cli.Command{
		{
			Name:   "pause",
			Usage:  "pause the team: supervisors start no agent until resume",
			Flags:  []cli.Flag{reason},
			Action: e.action(0, 0, "pause [--reason TEXT]", e.setMode(contracts.OpPause, contracts.ModePaused)),
		},
		{
			Name:   "resume",
			Usage:  "lift a pause, a checkpoint or an abort (and the seed's .liza files here)",
			Action: e.action(0, 0, "resume", e.setMode(contracts.OpResume, contracts.ModeRunning)),
		},
		{
			Name:   "abort",
			Usage:  "stop the team: supervisors kill their agents and exit",
			Flags:  []cli.Flag{reason},
			Action: e.action(0, 0, "abort [--reason TEXT]", e.setMode(contracts.OpAbort, contracts.ModeAborted)),
		},
	}
}

// modeResult is what pause, resume and abort report.
type modeResult struct {
	Mode    string   `json:"mode"`
	From    string   `json:"from"`
	Since   string   `json:"since,omitempty"`
	By      string   `json:"by"`
	Reason  string   `json:"reason,omitempty"`
	Removed []string `json:"removed_files,omitempty"`
	Files   []string `json:"files_still_on,omitempty"`
	Commit  string   `json:"commit"`
	Changed bool     `json:"changed"`
}

// setMode records a kill-switch mode in the state, where every clone and
// every supervisor sees it.
func (e *Env) setMode(op contracts.Op, mode string) func(context.Context, *session, []string) error {
	return func(ctx context.Context, s *session, _ []string) error {
		reason := s.cmd.String("reason")
		if strings.ContainsAny(reason, "\n\r") {
			return contracts.Invalidf("--reason must be one line")
		}
		by := contracts.ActorName(s.agent)
		res, err := s.update(ctx, cas.Op{Name: op, Apply: func(tx *cas.Tx) (any, error) {
			m, err := tx.Meta()
			if err != nil {
				return nil, err
			}
			from := contracts.ModeRunning
			if m.Control != nil && m.Control.Mode != "" {
				from = m.Control.Mode
			}
			out := modeResult{Mode: mode, From: from, By: by, Reason: reason}
			// ABORT outranks PAUSE (seed 000): only resume lifts an abort.
			if from == contracts.ModeAborted && mode == contracts.ModePaused {
				return nil, contracts.Invalidf("the team is ABORTED (since %s by %s): pause cannot lift an abort; resume first", m.Control.Since, m.Control.By)
			}
			if from == mode {
				if m.Control != nil {
					out.Since, out.By, out.Reason = m.Control.Since, m.Control.By, m.Control.Reason
				}
				return out, nil
			}
			if mode == contracts.ModeRunning {
				m.Control = nil
			} else {
				m.Control = &contracts.Control{Mode: mode, Since: tx.NowString(), By: by, Reason: reason}
				out.Since = m.Control.Since
			}
			out.Changed = true
			tx.PutMeta(m)
			subject := fmt.Sprintf("%s (%s)", op, by)
			if mode == contracts.ModeRunning {
				subject = fmt.Sprintf("resume from %s (%s)", strings.ToLower(from), by)
			}
			tx.Describe(subject, "")
			return out, nil
		}})
		if err != nil {
			return err
		}
		out, err := decodeResult[modeResult](res)
		if err != nil {
			return err
		}
		out.Commit = res.Commit.String()
		root := s.repo.MainWorkTree()
		if mode == contracts.ModeRunning && root != "" {
			for _, path := range slices.Sorted(func(yield func(string) bool) {
				for p := range contracts.SwitchFiles {
					if !yield(p) {
						return
					}
				}
			}) {
				err := os.Remove(filepath.Join(root, filepath.FromSlash(path)))
				if err == nil {
					out.Removed = append(out.Removed, path)
				}
			}
		}
		if root != "" {
			for path := range contracts.StatSwitchFiles(root) {
				out.Files = append(out.Files, path)
			}
			slices.Sort(out.Files)
		}
		if s.json {
			return s.printJSON(out)
		}
		switch {
		case !out.Changed && mode == contracts.ModeRunning && len(out.Removed) == 0:
			fmt.Fprintln(s.Stdout, "the team is running; nothing to resume")
		case !out.Changed && mode != contracts.ModeRunning:
			fmt.Fprintf(s.Stdout, "already %s since %s by %s\n", mode, out.Since, out.By)
		case mode == contracts.ModeRunning:
			fmt.Fprintf(s.Stdout, "resumed (was %s)\n", out.From)
		default:
			fmt.Fprintf(s.Stdout, "%s by %s at %s\n", mode, out.By, out.Since)
		}
		for _, p := range out.Removed {
			fmt.Fprintf(s.Stdout, "removed %s\n", p)
		}
		for _, p := range out.Files {
			fmt.Fprintf(s.Stdout, "%s is still present in %s and keeps this checkout %s\n", p, root, contracts.SwitchFiles[p])
		}
		return nil
	}
}

// decodeResult reads an operation's result value.
func decodeResult[T any](res *cas.Result) (T, error) {
	var out T
	if err := json.Unmarshal(res.Value, &out); err != nil {
		return out, contracts.Errorf(contracts.CodeInconsistent, "request result: %v", err)
	}
	return out, nil
}
