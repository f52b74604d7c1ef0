package ops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// ModeRequest sets the team's kill-switch mode.
type ModeRequest struct {
	Call
	// Mode is contracts.ModePaused, ModeAborted or ModeRunning (resume).
	Mode   string
	Reason string // one line, for the agents and the audit log
	// StopSessions, with ModePaused, also asks the supervisors to stop
	// the sessions they run (see contracts.StopSessions).
	StopSessions bool
}

// ModeResult is what pause, resume and abort report.
type ModeResult struct {
	Mode    string   `json:"mode"`
	From    string   `json:"from"`
	Since   string   `json:"since,omitempty"`
	By      string   `json:"by"`
	Reason  string   `json:"reason,omitempty"`
	Removed []string `json:"removed_files,omitempty"`
	Files   []string `json:"files_still_on,omitempty"`
	Commit  string   `json:"commit"`
	Changed bool     `json:"changed"`
	// StopSessions says the supervisors are asked to stop their running
	// sessions.
	StopSessions bool `json:"stop_sessions,omitempty"`
	// InSession are the agents the board shows in a session when the
	// mode was set (see InSession).
	InSession []SessionAgent `json:"in_session,omitempty"`
	// Root is the main checkout whose kill-switch files Removed and Files
	// name.
	Root string `json:"-"`
}

// modeKinds are the kind of write that sets each mode.
var modeKinds = map[string]*kind{
	contracts.ModePaused:  def("pause", contracts.OpPause, applyMode),
	contracts.ModeAborted: def("abort", contracts.OpAbort, applyMode),
	contracts.ModeRunning: def("resume", contracts.OpResume, applyMode),
}

type modeInput struct {
	Mode         string `json:"mode"`
	Reason       string `json:"reason,omitempty"`
	StopSessions bool   `json:"stop_sessions,omitempty"`
}

// SetMode records a kill-switch mode in the state, where every clone and
// every supervisor sees it. Resuming also removes the seed's .liza/ files
// from the main checkout.
func (s *Service) SetMode(ctx context.Context, r ModeRequest) (*ModeResult, error) {
	mode, reason := r.Mode, r.Reason
	k, ok := modeKinds[mode]
	if !ok {
		return nil, contracts.Invalidf("unknown mode %q", mode)
	}
	if strings.ContainsAny(reason, "\n\r") {
		return nil, contracts.Invalidf("--reason must be one line")
	}
	if r.StopSessions && mode != contracts.ModePaused {
		return nil, contracts.Invalidf("--stop-sessions goes with pause")
	}
	res, err := s.write(ctx, r.Call, k, modeInput{Mode: mode, Reason: reason, StopSessions: r.StopSessions}, nil)
	if err != nil {
		return nil, err
	}
	out, err := decode[ModeResult](res)
	if err != nil {
		return nil, err
	}
	out.Commit = res.Commit.String()
	if mode == contracts.ModePaused {
		if out.InSession, err = s.InSession(ctx); err != nil {
			return nil, err
		}
	}
	root := s.Repo.MainWorkTree()
	out.Root = root
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
	return &out, nil
}

// applyMode records a kill-switch mode in liza.yaml's control section.
func applyMode(tx *cas.Tx, in *modeInput) (any, error) {
	mode, reason, actor := in.Mode, in.Reason, contracts.ActorName(tx.Actor)
	m, err := tx.Meta()
	if err != nil {
		return nil, err
	}
	from := contracts.ModeRunning
	if m.Control != nil && m.Control.Mode != "" {
		from = m.Control.Mode
	}
	out := ModeResult{Mode: mode, From: from, By: actor, Reason: reason}
	// ABORT outranks PAUSE (seed 000): only resume lifts an abort.
	if from == contracts.ModeAborted && mode == contracts.ModePaused {
		return nil, contracts.Invalidf("the team is ABORTED (since %s by %s): pause cannot lift an abort; resume first", m.Control.Since, m.Control.By)
	}
	if from == mode {
		if m.Control != nil {
			out.Since, out.By, out.Reason = m.Control.Since, m.Control.By, m.Control.Reason
			out.StopSessions = contracts.StopSessions(m.Control)
		}
		if !in.StopSessions || out.StopSessions {
			return out, nil
		}
		// Paused already: the request to stop the sessions is added to
		// the pause, which keeps its time, author and reason.
		m.Control.Extra = withStopSessions(m.Control.Extra)
		out.StopSessions, out.Changed = true, true
		tx.PutMeta(m)
		tx.Describe(fmt.Sprintf("pause: stop running sessions (%s)", actor), "")
		return out, nil
	}
	if mode == contracts.ModeRunning {
		m.Control = nil
	} else {
		m.Control = &contracts.Control{Mode: mode, Since: tx.NowString(), By: actor, Reason: reason}
		if in.StopSessions {
			m.Control.Extra = withStopSessions(nil)
			out.StopSessions = true
		}
		out.Since = m.Control.Since
	}
	out.Changed = true
	tx.PutMeta(m)
	subject := fmt.Sprintf("%s (%s)", map[string]contracts.Op{contracts.ModePaused: contracts.OpPause, contracts.ModeAborted: contracts.OpAbort}[mode], actor)
	if mode == contracts.ModeRunning {
		subject = fmt.Sprintf("resume from %s (%s)", strings.ToLower(from), actor)
	}
	tx.Describe(subject, "")
	return out, nil
}

// withStopSessions is a control section's extra fields with the request
// to stop running sessions.
func withStopSessions(x contracts.Extra) contracts.Extra {
	out := contracts.Extra{}
	for k, v := range x {
		out[k] = v
	}
	out[contracts.StopSessionsKey] = true
	return out
}

// modeOf is the mode a control section sets: RUNNING when it sets none.
func modeOf(c *contracts.Control) string {
	if c == nil || c.Mode == "" {
		return contracts.ModeRunning
	}
	return c.Mode
}

// checkHalted refuses an agent's step (a claim, taking a review, a merge)
// while a kill switch halts the team: the state's control mode, which every
// clone sees, is checked inside the operation, so that the refusal follows
// from the state it builds on. Notes, blocks and the human's levers are not
// gated: they are how a halted team is put right. what names the step
// ("claims").
func checkHalted(c *contracts.Control, what string) error {
	sw := contracts.ActiveSwitches(c, nil)
	if len(sw) == 0 {
		return nil
	}
	return haltError(what, sw[0])
}

// checkSwitchFiles refuses the step while one of the seed's kill-switch
// files (.liza/PAUSE, .liza/ABORT, .liza/CHECKPOINT) is in the main
// checkout. Files halt this machine only, so they are checked before the
// operation, not inside it.
func (s *Service) checkSwitchFiles(what string) error {
	root := s.Repo.MainWorkTree()
	if root == "" {
		return nil
	}
	sw := contracts.ActiveSwitches(nil, contracts.StatSwitchFiles(root))
	if len(sw) == 0 {
		return nil
	}
	return haltError(what, sw[0])
}

// haltError names the switch that refuses a step.
func haltError(what string, sw contracts.Switch) error {
	src := sw.Source
	if sw.By != "" {
		src += " by " + sw.By
	}
	if sw.Reason != "" {
		src += ": " + sw.Reason
	}
	lift := "git liza resume lifts it"
	if sw.Source == "state" && sw.By == BreakerBy {
		lift = "git liza analyze --resolve TEXT lifts it"
	}
	if sw.Source == "state" && sw.By == contracts.BudgetBy && sw.Mode == contracts.ModePaused {
		lift = "raising the goal's budget lifts it (git liza budget --goal-tokens N or --goal-usd X)"
	}
	return contracts.Invalidf("%s are refused while the team is %s (%s); %s", what, sw.Mode, src, lift)
}
