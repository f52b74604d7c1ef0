package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// entryResult is what anomaly, discover and note report, kept with the
// request id so that a replayed request reports the first result.
type entryResult struct {
	ID       string `json:"id,omitempty"`
	N        int    `json:"n"`
	Type     string `json:"type,omitempty"`
	Task     string `json:"task,omitempty"`
	For      string `json:"for,omitempty"`
	By       string `json:"by"`
	Severity string `json:"severity,omitempty"`
	Urgency  string `json:"urgency,omitempty"`
}

// logEntry runs an operation that appends one entry to a list and prints
// what was added: line renders the text output.
func (s *session) logEntry(ctx context.Context, op cas.Op, line func(r entryResult) string) error {
	res, err := s.update(ctx, op)
	if err != nil {
		return err
	}
	r, err := decodeResult[entryResult](res)
	if err != nil {
		return err
	}
	if s.json {
		return s.printJSON(struct {
			entryResult
			Commit   string `json:"commit"`
			Replayed bool   `json:"replayed"`
		}{r, res.Commit.String(), res.Replayed})
	}
	note := ""
	if res.Replayed {
		note = " (already applied for this request id)"
	}
	fmt.Fprintf(s.Stdout, "%s%s\n", line(r), note)
	return nil
}

// knownTask returns an error unless id names a live or an archived task.
func knownTask(tx *cas.Tx, id string) error {
	if err := contracts.ValidTaskID(id); err != nil {
		return err
	}
	live, archived, err := tx.HasTask(id)
	if err != nil {
		return err
	}
	if !live && !archived {
		return contracts.Invalidf("no task %s", id)
	}
	return nil
}

// parseDetails reads KEY=VALUE pairs. A value written as a decimal integer
// is kept as a number (count=3), every other value as a string.
func parseDetails(pairs []string) (contracts.Extra, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	details := contracts.Extra{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\n") {
			return nil, contracts.Invalidf("--detail %q: want KEY=VALUE", p)
		}
		if _, dup := details[k]; dup {
			return nil, contracts.Invalidf("--detail %s is given twice", k)
		}
		if n, err := strconv.Atoi(v); err == nil && strconv.Itoa(n) == v {
			details[k] = n
		} else {
			details[k] = v
		}
	}
	return details, nil
}

func (e *Env) anomalyCmd() *cli.Command {
	const usage = "anomaly TYPE --task ID [--detail KEY=VALUE ...]"
	return &cli.Command{
		Name:      "anomaly",
		Usage:     "log an anomaly of seed 004's types (retry_loop, spec_ambiguity, ...) against a task",
		ArgsUsage: "TYPE",
		// Detail values are prose: commas do not separate them.
		DisableSliceFlagSeparator: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "the task `ID` the anomaly is about"},
			&cli.StringSliceFlag{Name: "detail", Usage: "a detail as KEY=VALUE (repeatable; the type's required keys must be present)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 1, 1, usage)
			if err != nil {
				return err
			}
			typ, task := a[0], cmd.String("task")
			if task == "" {
				return contracts.Invalidf("anomaly needs --task")
			}
			if err := contracts.ValidTaskID(task); err != nil {
				return err
			}
			details, err := parseDetails(cmd.StringSlice("detail"))
			if err != nil {
				return err
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			role, _ := contracts.ParseAgentID(s.agent)
			return s.logEntry(ctx, cas.Op{
				Name: contracts.OpAnomaly,
				Apply: func(tx *cas.Tx) (any, error) {
					an := &contracts.Anomaly{Type: typ, TaskID: task, LoggedBy: contracts.ActorName(tx.Actor), Timestamp: tx.NowString(), Details: details}
					if err := contracts.CheckAnomaly(an, role); err != nil {
						return nil, err
					}
					if err := knownTask(tx, task); err != nil {
						return nil, err
					}
					n, err := tx.ListLen(cas.ListAnomalies)
					if err != nil {
						return nil, err
					}
					an.ID = fmt.Sprintf("anomaly-%d", n+1)
					if n, err = tx.Append(cas.ListAnomalies, an); err != nil {
						return nil, err
					}
					tx.Describe(fmt.Sprintf("anomaly %s on %s%s", typ, task, by(tx.Actor)), task)
					return entryResult{ID: an.ID, N: n, Type: typ, Task: task, By: an.LoggedBy}, nil
				},
			}, func(r entryResult) string {
				return fmt.Sprintf("%s logged: %s on %s", r.ID, r.Type, r.Task)
			})
		},
	}
}

func (e *Env) discoverCmd() *cli.Command {
	const usage = "discover --desc TEXT [--severity critical|high|medium|low] [--urgency deferred|immediate] [--task ID] [--recommendation TEXT]"
	return &cli.Command{
		Name:  "discover",
		Usage: "log an adjacent problem found during a task, without fixing it",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "desc", Usage: "what was discovered"},
			&cli.StringFlag{Name: "severity", Usage: "critical, high, medium or low"},
			&cli.StringFlag{Name: "urgency", Value: "deferred", Usage: "deferred, or immediate to wake the planner"},
			&cli.StringFlag{Name: "task", Usage: "the task `ID` it was found during (default: the agent's current task)"},
			&cli.StringFlag{Name: "recommendation", Usage: "the suggested action"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, usage); err != nil {
				return err
			}
			d := &contracts.Discovery{
				Description:    strings.TrimSpace(cmd.String("desc")),
				Severity:       cmd.String("severity"),
				Urgency:        cmd.String("urgency"),
				Recommendation: strings.TrimSpace(cmd.String("recommendation")),
			}
			task := cmd.String("task")
			if d.Description == "" {
				return contracts.Invalidf("discover needs --desc")
			}
			if d.Severity != "" && !slices.Contains(contracts.Severities, d.Severity) {
				return contracts.Invalidf("--severity %q: want one of %s", d.Severity, strings.Join(contracts.Severities, ", "))
			}
			if !slices.Contains(contracts.Urgencies, d.Urgency) {
				return contracts.Invalidf("--urgency %q: want deferred or immediate", d.Urgency)
			}
			if task != "" {
				if err := contracts.ValidTaskID(task); err != nil {
					return err
				}
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			return s.logEntry(ctx, cas.Op{
				Name: contracts.OpDiscover,
				Apply: func(tx *cas.Tx) (any, error) {
					nd := *d
					nd.By = contracts.ActorName(tx.Actor)
					nd.Timestamp = tx.NowString()
					nd.During = task
					if task != "" {
						if err := knownTask(tx, task); err != nil {
							return nil, err
						}
					} else if tx.Actor != "" {
						a, err := tx.Agent(tx.Actor)
						if err != nil {
							return nil, err
						}
						if a != nil {
							nd.During = a.CurrentTask
						}
					}
					n, err := tx.ListLen(cas.ListDiscovered)
					if err != nil {
						return nil, err
					}
					nd.ID = fmt.Sprintf("disc-%d", n+1)
					if n, err = tx.Append(cas.ListDiscovered, &nd); err != nil {
						return nil, err
					}
					subject := "discover " + nd.ID
					if nd.During != "" {
						subject += " during " + nd.During
					}
					tx.Describe(subject+by(tx.Actor), nd.During)
					return entryResult{ID: nd.ID, N: n, Task: nd.During, By: nd.By, Severity: nd.Severity, Urgency: nd.Urgency}, nil
				},
			}, func(r entryResult) string {
				line := r.ID + " logged"
				if r.Task != "" {
					line += " during " + r.Task
				}
				if r.Severity != "" {
					return fmt.Sprintf("%s (%s, %s)", line, r.Severity, r.Urgency)
				}
				return fmt.Sprintf("%s (%s)", line, r.Urgency)
			})
		},
	}
}

func (e *Env) noteCmd() *cli.Command {
	const usage, doneUsage = "note [--for ID] MESSAGE", "note --done N[,N...]"
	return &cli.Command{
		Name:      "note",
		Usage:     "leave a note for the agents (human_notes), optionally for one task or agent; a planner marks notes it has dealt with --done",
		ArgsUsage: "MESSAGE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "for", Usage: "the task or agent `ID` the note is for"},
			&cli.StringSliceFlag{Name: "done", Usage: "planner: mark note `N` processed (as note numbers them, from 1), so that it wakes no planner again"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if done := splitList(cmd.StringSlice("done")); len(done) > 0 {
				if cmd.Args().Len() > 0 || cmd.String("for") != "" {
					return contracts.Invalidf("usage: git liza %s", doneUsage)
				}
				var nums []int
				for _, d := range done {
					n, err := strconv.Atoi(d)
					if err != nil || n < 1 {
						return contracts.Invalidf("--done %s: want a note number (1 for the first note)", d)
					}
					nums = append(nums, n)
				}
				s, err := e.open(cmd)
				if err != nil {
					return err
				}
				return s.notesDone(ctx, nums)
			}
			a, err := args(cmd, 1, 1, usage)
			if err != nil {
				return err
			}
			msg := strings.TrimSpace(a[0])
			if msg == "" {
				return contracts.Invalidf("note needs a message")
			}
			target := cmd.String("for")
			if target != "" {
				if err := contracts.ValidID(target); err != nil {
					return contracts.Invalidf("--for %s names no task and no agent", target)
				}
			}
			s, err := e.open(cmd)
			if err != nil {
				return err
			}
			return s.logEntry(ctx, cas.Op{
				Name: contracts.OpNote,
				Apply: func(tx *cas.Tx) (any, error) {
					isTask := false
					if target != "" {
						live, archived, err := tx.HasTask(target)
						if err != nil {
							return nil, err
						}
						isTask = live || archived
						if _, err := contracts.ParseAgentID(target); !isTask && err != nil {
							return nil, contracts.Invalidf("--for %s names no task and no agent", target)
						}
					}
					hn := &contracts.HumanNote{Timestamp: tx.NowString(), Message: msg, For: target, By: contracts.ActorName(tx.Actor)}
					n, err := tx.Append(cas.ListHumanNotes, hn)
					if err != nil {
						return nil, err
					}
					subject, task := "note", ""
					if target != "" {
						subject += " for " + target
					}
					if isTask {
						task = target
					}
					tx.Describe(subject+by(tx.Actor), task)
					return entryResult{N: n, For: target, By: hn.By}, nil
				},
			}, func(r entryResult) string {
				if r.For != "" {
					return fmt.Sprintf("note %d added for %s", r.N, r.For)
				}
				return fmt.Sprintf("note %d added", r.N)
			})
		},
	}
}

// notesDone records on the planner's entry that it has dealt with the
// human notes nums, so that they wake no planner again (seed 000: the
// planner clears the notes it has processed; the notes themselves stay, as
// the coders they are for still read them). Marking a note twice changes
// nothing.
func (s *session) notesDone(ctx context.Context, nums []int) error {
	if role, _ := contracts.ParseAgentID(s.agent); role != contracts.RolePlanner {
		return contracts.Invalidf("only a planner marks notes processed (git liza --agent planner-N note --done N)")
	}
	res, err := s.update(ctx, cas.Op{Name: contracts.OpNote, Apply: func(tx *cas.Tx) (any, error) {
		count, err := tx.ListLen(cas.ListHumanNotes)
		if err != nil {
			return nil, err
		}
		a, err := tx.Agent(s.agent)
		if err != nil {
			return nil, err
		}
		if a == nil {
			a = &contracts.Agent{Role: string(contracts.RolePlanner), Status: "IDLE", Started: tx.NowString()}
		}
		added := []int{}
		for _, n := range nums {
			if n > count {
				return nil, contracts.Invalidf("no note %d (there are %s)", n, contracts.Plural(count, "note"))
			}
			if !slices.Contains(a.NotesProcessed, n) && !slices.Contains(added, n) {
				added = append(added, n)
			}
		}
		if len(added) > 0 {
			a.NotesProcessed = append(a.NotesProcessed, added...)
			slices.Sort(a.NotesProcessed)
			tx.PutAgent(s.agent, a)
			tx.Describe(fmt.Sprintf("%s processed (%s)", noteList(added), s.agent), "")
		}
		return map[string]any{"agent": s.agent, "processed": added}, nil
	}})
	if err != nil {
		return err
	}
	var out struct {
		Agent     string `json:"agent"`
		Processed []int  `json:"processed"`
	}
	if err := json.Unmarshal(res.Value, &out); err != nil {
		return err
	}
	if s.json {
		return s.printJSON(out)
	}
	if len(out.Processed) == 0 {
		fmt.Fprintln(s.Stdout, "already processed; nothing written")
		return nil
	}
	fmt.Fprintf(s.Stdout, "%s processed by %s\n", noteList(out.Processed), s.agent)
	return nil
}

// noteList names notes: "note 2", "notes 1, 3".
func noteList(ns []int) string {
	words := make([]string, len(ns))
	for i, n := range ns {
		words[i] = strconv.Itoa(n)
	}
	if len(ns) == 1 {
		return "note " + words[0]
	}
	return "notes " + strings.Join(words, ", ")
}
