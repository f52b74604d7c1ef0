package commands

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v3"

	"github.com/liza-dev/git-liza/agent"
	"github.com/liza-dev/git-liza/contracts"
	"github.com/liza-dev/git-liza/ops"
	"github.com/liza-dev/git-liza/refstore"
)

// Shell completion: each script asks `git liza __complete WORD...` (the
// words after "liza" up to the one being completed) for the candidates,
// one per line, so that the scripts stay small and know nothing of the
// commands. The bash script defines _git_liza, the function git's own
// bash completion calls for `git liza <TAB>`; the zsh one _git-liza, which
// git's zsh completion calls; fish completes git-liza, which fish's git
// completion uses for `git liza`.

func (e *Env) completionCmd() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			a, err := args(cmd, 1, 1, "completion bash|zsh|fish")
			if err != nil {
				return err
			}
			script, ok := completionScripts[a[0]]
			if !ok {
				return &usageError{msg: fmt.Sprintf("no completion for %q: bash, zsh or fish", a[0]), usage: synopsis(cmd)}
			}
			_, err = fmt.Fprint(e.Stdout, script)
			return err
		},
	}
}

var completionScripts = map[string]string{
	"bash": `# bash completion for git liza (git-liza completion bash)
# With git's bash completion loaded, "git liza <TAB>" calls _git_liza.
_git_liza ()
{
	local i start=-1
	for ((i = 0; i < cword; i++)); do
		case "${words[i]}" in liza|git-liza) start=$((i + 1)); break ;; esac
	done
	[ "$start" -ge 0 ] || return
	local IFS=$'\n'
	local candidates
	candidates=$(git liza __complete "${words[@]:start:cword-start+1}" 2>/dev/null)
	if declare -F __gitcomp_nl >/dev/null; then
		__gitcomp_nl "$candidates"
	else
		COMPREPLY=($(compgen -W "$candidates" -- "${words[cword]}"))
	fi
}

_git_liza_command ()
{
	local cur words cword
	if declare -F _get_comp_words_by_ref >/dev/null; then
		_get_comp_words_by_ref -n =: cur words cword
	else
		words=("${COMP_WORDS[@]}") cword=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]}
	fi
	_git_liza
}
complete -o bashdefault -o default -o nospace -F _git_liza_command git-liza 2>/dev/null \
	|| complete -o default -o nospace -F _git_liza_command git-liza
`,
	"zsh": `#compdef git-liza
# zsh completion for git liza (git-liza completion zsh): save it as _git-liza
# in a directory of $fpath; git's zsh completion calls _git-liza for
# "git liza <TAB>".
_git-liza () {
	local -a candidates
	candidates=(${(f)"$(git liza __complete "${(@)words[2,CURRENT]}" 2>/dev/null)"})
	compadd -- $candidates
}
if [ "$funcstack[1]" = "_git-liza" ]; then
	_git-liza "$@"
fi
`,
	"fish": `# fish completion for git liza (git-liza completion fish): save it as
# ~/.config/fish/conf.d/git-liza.fish, so that it is loaded at start-up and
# completes "git liza <TAB>" as well as git-liza.
function __git_liza_complete
	set -l words (commandline -opc)
	while set -q words[1]; and test "$words[1]" != liza; and test "$words[1]" != git-liza
		set -e words[1]
	end
	set -e words[1]
	git liza __complete $words (commandline -ct) 2>/dev/null
end
complete -c git -f -n '__fish_seen_subcommand_from liza' -a '(__git_liza_complete)'
complete -c git-liza -f -a '(__git_liza_complete)'
`,
}

// completeCmd is what the completion scripts run.
func (e *Env) completeCmd() *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			for _, c := range e.complete(ctx, cmd.Args().Slice()) {
				fmt.Fprintln(e.Stdout, c)
			}
			return nil
		},
	}
}

// complete returns the candidates for the last of words, the command line
// after "git liza" (the last word is the one being completed, possibly
// empty), filtered by it.
func (e *Env) complete(ctx context.Context, words []string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, before := words[len(words)-1], words[:len(words)-1]
	root := e.app()
	prepare(root, "")
	cmd, path, positional := root, "", 0
	var prev string
	for i := 0; i < len(before); i++ {
		w := before[i]
		if strings.HasPrefix(w, "-") {
			if f := findFlag(cmd, strings.TrimLeft(w, "-")); f != nil && takesValue(f) && !strings.Contains(w, "=") {
				i++
				if i == len(before) {
					prev = w
				}
			}
			continue
		}
		if sub := cmd.Command(w); sub != nil && positional == 0 && len(cmd.Commands) > 0 {
			cmd = sub
			path = strings.TrimSpace(path + " " + sub.Name)
			continue
		}
		positional++
	}
	var out []string
	switch {
	case prev != "":
		out = e.flagValues(ctx, strings.TrimLeft(prev, "-"))
	case strings.HasPrefix(cur, "-"):
		for _, c := range cmd.Lineage() {
			for _, f := range c.VisibleFlags() {
				if n := f.Names()[0]; len(n) > 1 && n != "help" && (c == cmd || c == root) {
					out = append(out, "--"+n)
				}
			}
		}
	case len(visible(cmd)) > 0 && positional == 0:
		for _, c := range visible(cmd) {
			out = append(out, c.Name)
		}
	default:
		out = e.positionalValues(ctx, path, positional)
	}
	var match []string
	for _, c := range out {
		if strings.HasPrefix(c, cur) && !slices.Contains(match, c) {
			match = append(match, c)
		}
	}
	return match
}

func findFlag(cmd *cli.Command, name string) cli.Flag {
	name, _, _ = strings.Cut(name, "=")
	for _, c := range cmd.Lineage() {
		for _, f := range c.Flags {
			if slices.Contains(f.Names(), name) {
				return f
			}
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	d, ok := f.(cli.DocGenerationFlag)
	return ok && d.TakesValue()
}

// flagValues are the candidates for the value of flag name.
func (e *Env) flagValues(ctx context.Context, name string) []string {
	switch name {
	case "agent", "for":
		_, agents := e.names(ctx)
		return agents
	case "task", "by", "depends":
		tasks, _ := e.names(ctx)
		return tasks
	case "status":
		var out []string
		for _, s := range contracts.Statuses {
			out = append(out, string(s))
		}
		return out
	case "role":
		return []string{"coder", "reviewer", "both"}
	case "cli":
		return agent.PresetNames()
	case "urgency":
		return []string{"deferred", "immediate"}
	}
	return nil
}

// positionalValues are the candidates for the n-th positional argument
// (from 0) of the command at path.
func (e *Env) positionalValues(ctx context.Context, path string, n int) []string {
	switch path {
	case "claim":
		if n == 0 {
			return e.claimable(ctx)
		}
	case "submit", "review", "merge", "checkpoint", "handoff",
		"task finalize", "task edit", "task block", "task unblock", "task supersede", "task abandon",
		"task release", "task archive":
		if n == 0 || path == "task archive" {
			return e.taskIDs(ctx, verbTakes()[path])
		}
	case "show", "worktree delete":
		if n == 0 {
			tasks, _ := e.names(ctx)
			return tasks
		}
	case "verdict":
		if n == 0 {
			return e.taskIDs(ctx, verbTakes()[path])
		}
		if n == 1 {
			return []string{"approve", "reject"}
		}
	case "agent", "prompt":
		if n == 0 {
			return []string{"planner", "coder", "code-reviewer"}
		}
	case "anomaly":
		if n == 0 {
			return slices.Sorted(maps.Keys(contracts.AnomalyTypes))
		}
	case "completion":
		if n == 0 {
			return []string{"bash", "zsh", "fish"}
		}
	case "help":
		root := e.app()
		var out []string
		for _, c := range visible(root) {
			out = append(out, c.Name)
		}
		return out
	case "sync":
		if n == 0 {
			return e.remotes()
		}
	}
	return nil
}

// verbTakes says which tasks a verb can act on, for completion: a MERGED
// task is not offered to claim, nor a DRAFT one to merge. (claim is
// offered what ops.Ready lists.)
var verbTakes = sync.OnceValue(func() map[string]func(*contracts.TaskSummary) bool {
	return map[string]func(*contracts.TaskSummary) bool{
		"submit":         hasStatus(contracts.Claimed),
		"checkpoint":     hasStatus(contracts.Claimed),
		"handoff":        hasStatus(contracts.Claimed),
		"review":         hasStatus(contracts.ReadyForReview),
		"verdict":        hasStatus(contracts.ReadyForReview),
		"merge":          hasStatus(contracts.Approved),
		"task finalize":  hasStatus(contracts.Draft),
		"task edit":      hasStatus(contracts.Draft, contracts.Unclaimed),
		"task unblock":   hasStatus(contracts.Blocked),
		"task release":   hasStatus(contracts.Claimed, contracts.ReadyForReview, contracts.Rejected, contracts.IntegrationFailed),
		"task block":     func(t *contracts.TaskSummary) bool { return !t.Status.Terminal() && t.Status != contracts.Blocked },
		"task supersede": func(t *contracts.TaskSummary) bool { return !t.Status.Terminal() },
		"task abandon":   func(t *contracts.TaskSummary) bool { return !t.Status.Terminal() },
		"task archive":   func(t *contracts.TaskSummary) bool { return t.Status.Terminal() },
	}
})

func hasStatus(statuses ...contracts.Status) func(*contracts.TaskSummary) bool {
	return func(t *contracts.TaskSummary) bool { return slices.Contains(statuses, t.Status) }
}

// service opens the blackboard here for completion, acting as
// LIZA_AGENT_ID when it names an agent; nil outside a repository.
func (e *Env) service() *ops.Service {
	repo, err := refstore.Open(e.Dir)
	if err != nil {
		return nil
	}
	agent := e.Getenv("LIZA_AGENT_ID")
	if _, err := contracts.ParseAgentID(agent); err != nil {
		agent = ""
	}
	clock, _ := e.clock()
	svc, err := ops.New(repo, ops.Options{Agent: agent, Clock: clock})
	if err != nil {
		return nil
	}
	return svc
}

// taskIDs are the ids of the live tasks keep accepts.
func (e *Env) taskIDs(ctx context.Context, keep func(*contracts.TaskSummary) bool) []string {
	svc := e.service()
	if svc == nil || keep == nil {
		return nil
	}
	ids, _ := svc.TaskIDs(ctx, keep)
	return ids
}

// claimable is what claim can take now (status --ready), for
// LIZA_AGENT_ID's coder or any coder.
func (e *Env) claimable(ctx context.Context) []string {
	svc := e.service()
	if svc == nil {
		return nil
	}
	ids, _ := svc.ReadyIDs(ctx)
	return ids
}

// names reads the task and agent ids of the blackboard here; none when
// there is no blackboard.
func (e *Env) names(ctx context.Context) (tasks, agents []string) {
	repo, err := refstore.Open(e.Dir)
	if err != nil {
		return nil, nil
	}
	svc, err := ops.New(repo, ops.Options{})
	if err != nil {
		return nil, nil
	}
	tasks, agents, _ = svc.Names(ctx)
	return tasks, agents
}

// remotes are the repository's remotes.
func (e *Env) remotes() []string {
	repo, err := refstore.Open(e.Dir)
	if err != nil {
		return nil
	}
	out, err := repo.Git(context.Background(), "remote")
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}
