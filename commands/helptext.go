package commands

// help is what the help pages and the manual say of one command besides
// its flags: its usage line (after "git liza "), the group it is listed
// in, and examples. helpTexts names each command by its names below the
// root ("task add"); TestHelpTexts checks that every command has one. It
// is a list, which the program holds as it is built, not a map made at
// every start: every command reads it, and the map cost each run a tenth
// of a millisecond before main.
type help struct {
	usage    string
	category string
	examples []string
}

// The groups of the command list, as CLI.md has them.
const (
	catBoard    = "the blackboard"
	catPlanner  = "planner"
	catCoder    = "coder"
	catReviewer = "code reviewer"
	catEveryone = "everyone"
	catTeam     = "git, sharing, supervision"
	catHelp     = "reading and help"
)

// helpFor is what helpTexts says of the command named name.
func helpFor(name string) (help, bool) {
	for _, h := range helpTexts {
		if h.name == name {
			return h.help, true
		}
	}
	return help{}, false
}

var helpTexts = []struct {
	name string
	help
}{
	{"", help{examples: []string{
		`git liza init --spec specs/vision.md "Retry every API call"`,
		`git liza run --coders 2 --reviewers 1 --cli claude`,
		`git liza status`,
	}}},
	{"init", help{usage: "init [--spec PATH] [--integration-branch NAME] GOAL", category: catBoard, examples: []string{
		`git liza init --spec specs/vision.md "Retry every API call"`,
		`git liza init --integration-branch develop "Port the parser to Go"`,
	}}},
	{"status", help{usage: "status [--fetch] [--status S] [--agent ID | --mine] [--limit N] [--at REV] | status --ready [--limit N]", category: catBoard, examples: []string{
		`git liza status                      # what needs attention first; "waits on" names unmerged dependencies`,
		`git liza --agent coder-1 status --ready   # what coder-1 can claim now, best first`,
		`git liza status --status BLOCKED,REJECTED`,
		`git liza --agent coder-1 status --mine`,
		`git liza status --fetch              # in remote mode: fetch the board first`,
		`git liza status --json | jq '.tasks[] | select(.status == "CLAIMED") | .lease_expires'`,
	}}},
	{"usage", help{usage: spendUsage, category: catBoard, examples: []string{
		`git liza usage                      # the sprint's spend: by outcome, role, model, agent, task`,
		`git liza usage --goal               # every session of the goal`,
		`git liza usage --agent coder-1 --since 2h`,
		`git liza usage --json | jq '.by_task[] | select(.status == "MERGED") | .cost_usd'`,
	}}},
	{"show", help{usage: "show [--at REV] [--all] [ID]", category: catBoard, examples: []string{
		`git liza show task-3`,
		`git liza show --at refs/liza/state~5 --json | jq '.tasks[].status'`,
	}}},
	{"log", help{usage: "log [-p] [--task ID] [--agent ID] [-n N] [--at REV]", category: catBoard, examples: []string{
		`git liza log -n 20`,
		`git liza log -p --task task-3       # what each operation changed on task-3`,
		`git liza log --agent code-reviewer-1`,
	}}},
	{"validate", help{usage: "validate [--at REV | --file PATH] [--history]", category: catBoard, examples: []string{
		`git liza validate --history`,
		`git liza validate --file .liza/state.yaml`,
	}}},
	{"import", help{usage: "import PATH", category: catBoard, examples: []string{
		`git liza import .liza/state.yaml`,
		`git liza export > state.yaml && $EDITOR state.yaml && git liza import state.yaml`,
	}}},
	{"export", help{usage: "export [--at REV]", category: catBoard, examples: []string{
		`git liza export > state.yaml`,
	}}},
	{"task", help{usage: "task COMMAND [ARGS]", category: catPlanner, examples: []string{
		`git liza help task add`,
	}}},
	{"task add", help{usage: "task add --id ID --desc TEXT --spec REF --done TEXT --scope TEXT [--priority N] [--depends A,B] [--docs A,B] [--draft] [--from-discovery N]", examples: []string{
		`git liza --agent planner-1 task add --id task-1 --desc "Retry GET calls" --spec specs/vision.md#retry --done "go test ./retry passes" --scope "IN: retry/"`,
		`git liza task add --id task-2 --desc "Retry POST calls" --spec specs/vision.md --done "tests pass" --scope "IN: retry/" --depends task-1 --paths retry/post.go`,
		`git liza --agent planner-1 task add --id task-5 --desc "Honour timeouts" --spec specs/vision.md --done "tests pass" --scope "IN: client/" --from-discovery 2`,
		`git liza task add --id task-6 --desc "Log retries" --spec specs/vision.md --done "tests pass" --scope "IN: log/" --docs docs/agent_docs/CODEBASE.md,docs/agent_docs/TESTING.md`,
	}}},
	{"task finalize", help{usage: "task finalize ID", examples: []string{
		`git liza --agent planner-1 task finalize task-4`,
	}}},
	{"task edit", help{usage: "task edit ID [--desc T] [--spec R] [--done T] [--scope T] [--priority N] [--depends A,B] [--paths P,...] [--max-files N] [--max-loc N] [--docs A,B]", examples: []string{
		`git liza --agent planner-1 task edit task-4 --scope "IN: retry/get.go" --done "go test ./retry -run GET passes"`,
		`git liza task edit task-4 --depends ""          # no dependencies`,
		`git liza task edit task-4 --docs docs/agent_docs/TESTING.md`,
	}}},
	{"task block", help{usage: "task block ID --reason TEXT --question Q [--question Q ...] [--attempted TEXT ...]", examples: []string{
		`git liza --agent coder-1 task block task-3 --reason "the spec contradicts itself" --question "Retry POST or not?"`,
	}}},
	{"task unblock", help{usage: "task unblock ID", examples: []string{
		`git liza task unblock task-3`,
	}}},
	{"task supersede", help{usage: "task supersede ID --by NEW[,NEW] --reason TEXT", examples: []string{
		`git liza --agent planner-1 task supersede task-3 --by task-7,task-8 --reason "split in two"`,
	}}},
	{"task abandon", help{usage: "task abandon ID --reason TEXT", examples: []string{
		`git liza task abandon task-5 --reason "out of scope after all"`,
	}}},
	{"task release", help{usage: "task release ID [--role coder|reviewer|both] [--force]", examples: []string{
		`git liza task release task-3 --role coder --force`,
	}}},
	{"task archive", help{usage: "task archive [ID ...]", examples: []string{
		`git liza task archive             # every terminal task`,
		`git liza task archive task-1 task-2`,
	}}},
	{"claim", help{usage: "claim [ID] [--no-worktree]", category: catCoder, examples: []string{
		`git liza --agent coder-1 claim          # the best claimable task`,
		`git liza --agent coder-1 claim task-3`,
	}}},
	{"checkpoint", help{usage: "checkpoint ID --intent TEXT --validation TEXT --files A,B [--assumption TEXT ...] [--risks TEXT]", category: catCoder, examples: []string{
		`git liza --agent coder-1 checkpoint task-3 --intent "wrap GET in retry()" --validation "go test ./retry" --files retry/get.go`,
	}}},
	{"heartbeat", help{usage: "heartbeat", category: catCoder, examples: []string{
		`git liza --agent coder-1 heartbeat`,
	}}},
	{"submit", help{usage: "submit ID [COMMIT]", category: catCoder, examples: []string{
		`git liza --agent coder-1 submit task-3`,
	}}},
	{"handoff", help{usage: "handoff ID --summary TEXT --next TEXT", category: catCoder, examples: []string{
		`git liza --agent coder-1 handoff task-3 --summary "GET done" --next "POST and PUT"`,
	}}},
	{"review", help{usage: "review [ID]", category: catReviewer, examples: []string{
		`git liza --agent code-reviewer-1 review           # the best task awaiting review`,
	}}},
	{"verdict", help{usage: "verdict ID approve|reject [--reason TEXT] [--feedback TEXT] [--commit SHA]", category: catReviewer, examples: []string{
		`git liza --agent code-reviewer-1 verdict task-3 approve`,
		`git liza --agent code-reviewer-1 verdict task-3 reject --reason "no test for the 5xx case" --feedback "add a test that returns 503 twice"`,
	}}},
	{"merge", help{usage: "merge ID | merge --queue", category: catReviewer, examples: []string{
		`git liza --agent code-reviewer-1 merge task-3`,
		`git liza --agent code-reviewer-1 merge --queue     # every APPROVED task, in tested batches`,
		`git liza --agent code-reviewer-1 merge --queue --json | jq -r '.tasks[] | select(.status != "MERGED") | .id'`,
	}}},
	{"anomaly", help{usage: "anomaly TYPE --task ID [--detail KEY=VALUE ...]", category: catEveryone, examples: []string{
		`git liza --agent coder-1 anomaly spec_ambiguity --task task-3 --detail question="retry POST?"`,
	}}},
	{"discover", help{usage: "discover --desc TEXT [--severity S] [--urgency deferred|immediate] [--task ID]", category: catEveryone, examples: []string{
		`git liza --agent coder-1 discover --desc "the client ignores timeouts" --severity high`,
	}}},
	{"discover convert", help{usage: "discover convert N --task ID", examples: []string{
		`git liza --agent planner-1 discover convert 2 --task task-5`,
	}}},
	{"goal", help{usage: "goal new [--spec PATH] GOAL | goal complete", category: catPlanner, examples: []string{
		`git liza help goal new`,
		`git liza help goal complete`,
	}}},
	{"goal complete", help{usage: "goal complete", examples: []string{
		`git liza goal complete              # every task is MERGED, SUPERSEDED or ABANDONED`,
		`git liza --agent planner-1 goal complete`,
	}}},
	{"goal new", help{usage: "goal new [--spec PATH] GOAL", examples: []string{
		`git liza --agent planner-1 goal new --spec specs/v2.md "Retry with jitter"`,
	}}},
	{"note", help{usage: "note [--for ID] MESSAGE", category: catEveryone, examples: []string{
		`git liza note --for task-3 "use the existing backoff helper"`,
		`git liza --agent planner-1 note --done 2`,
	}}},
	{"worktree", help{usage: "worktree list | prune | delete ID", category: catEveryone, examples: []string{
		`git liza worktree list`,
		`git liza worktree prune`,
	}}},
	{"worktree list", help{usage: "worktree list", examples: []string{`git liza worktree list --json`}}},
	{"worktree prune", help{usage: "worktree prune", examples: []string{`git liza worktree prune`}}},
	{"worktree delete", help{usage: "worktree delete ID [--force]", examples: []string{`git liza worktree delete task-5`}}},
	{"hooks", help{usage: "hooks install [--force] [--server] | uninstall | status", category: catTeam, examples: []string{
		`git liza hooks install`,
		`git liza hooks status`,
	}}},
	{"hooks install", help{usage: "hooks install [--force] [--server]", examples: []string{
		`git liza hooks install`,
		`git liza hooks install --force     # keep the hooks that are there and run them first`,
		`git -C /srv/project.git liza hooks install --server`,
	}}},
	{"hooks uninstall", help{usage: "hooks uninstall", examples: []string{`git liza hooks uninstall`}}},
	{"hooks status", help{usage: "hooks status", examples: []string{`git liza hooks status`}}},
	{"hook", help{usage: "hook NAME [ARGS]", category: catTeam, examples: []string{
		`git liza hook pre-commit            # what a hook manager's script runs (husky, lefthook, pre-commit)`,
	}}},
	{"sync", help{usage: "sync [--discard-local] [REMOTE]", category: catTeam, examples: []string{
		`git liza sync                                      # join the only remote's blackboard; sets liza.remote`,
		`git liza sync origin                               # with several remotes, name the one to join`,
		`git liza sync --discard-local origin                # drop an unrelated local board for origin's`,
	}}},
	{"integration", help{usage: "integration adopt [COMMIT]", category: catTeam, examples: []string{
		`git liza help integration adopt`,
	}}},
	{"integration adopt", help{usage: "integration adopt [COMMIT]", examples: []string{
		`git merge --ff-only release-2 && git liza integration adopt     # after moving the branch by hand`,
		`git liza integration adopt 3f2a9c1e                             # accept the commit a refusal named`,
	}}},
	{"agent", help{usage: "agent ROLE [--cli claude|codex|gemini] [--sandboxed] [-- COMMAND ARGS ...]", category: catTeam, examples: []string{
		`git liza agent coder --cli claude`,
		`git liza agent coder --cli codex --sandboxed     # in a container or VM of its own`,
		`git liza agent code-reviewer -- ./my-reviewer.sh`,
	}}},
	{"run", help{usage: "run [--coders N] [--reviewers M] [--no-planner] [--sandboxed] [--follow AGENT | -v] [--json] [--cli NAME | -- COMMAND ARGS ...]", category: catTeam, examples: []string{
		`git liza run --coders 2 --reviewers 1 --cli claude`,
		`git liza run --no-planner --sandboxed --cli gemini`,
		`git liza run --follow coder-1            # also coder-1's steps, as git liza logs -f shows them`,
		`git liza run --json | jq -c 'select(.kind == "merged")'`,
	}}},
	{"logs", help{usage: logsUsage, category: catTeam, examples: []string{
		`git liza logs                      # every session: agent, task, outcome, steps, tokens`,
		`git liza logs task-3               # task-3's latest session, step by step`,
		`git liza logs coder-1 -f           # follow coder-1's session as it runs`,
		`git liza logs --session 7 --json | jq -c 'select(.error)'`,
	}}},
	{"doctor", help{usage: "doctor [--cli NAME] [--sandboxed] [-- COMMAND ARGS ...]", category: catTeam, examples: []string{
		`git liza doctor                  # the claude preset, as git liza run would start it`,
		`git liza doctor --cli codex --sandboxed --json`,
		`git liza doctor -- ./my-agent.sh`,
	}}},
	{"supervise", help{usage: "supervise register | exit | complete"}},
	{"supervise register", help{usage: "supervise register [--replace]"}},
	{"supervise exit", help{usage: "supervise exit"}},
	{"supervise complete", help{usage: "supervise complete"}},
	{"pause", help{usage: "pause [--reason TEXT] [--stop-sessions]", category: catTeam, examples: []string{
		`git liza pause --reason "lunch"`,
		`git liza pause --stop-sessions     # also stop running sessions, with a handoff`,
	}}},
	{"resume", help{usage: "resume", category: catTeam, examples: []string{`git liza resume`}}},
	{"abort", help{usage: "abort [--reason TEXT]", category: catTeam, examples: []string{
		`git liza abort --reason "wrong goal"`,
	}}},
	{"budget", help{usage: "budget [--session-tokens N] [--task-tokens N] [--task-usd X] [--agent-tokens N] [--agent-usd X] [--goal-tokens N] [--goal-usd X] [--warn SHARE] [--clear]", category: catTeam, examples: []string{
		`git liza budget                                   # the budgets in force and what is spent`,
		`git liza budget --session-tokens 200000 --task-usd 5 --goal-usd 100`,
		`git liza budget --task-tokens 2000000             # raise it: tasks blocked for it unblock`,
		`git liza budget --clear`,
	}}},
	{"watch", help{usage: "watch [--once] [--interval DURATION] [--log PATH]", category: catTeam, examples: []string{
		`git liza watch --once          # for cron`,
	}}},
	{"notify", help{usage: "notify test", category: catTeam, examples: []string{
		`git liza notify test`,
	}}},
	{"notify test", help{usage: "notify test", examples: []string{
		`git config --global liza.notifyURL https://ntfy.sh/my-team-topic && git liza notify test`,
	}}},
	{"board", help{usage: "board [--interval DURATION]", category: catTeam, examples: []string{
		`git liza board                 # ↑↓ tab pgup pgdn home end: move; enter: a task's detail, an agent's session; esc: back`,
		`git liza board                 # levers, yours in git liza log: p pause, R resume, A abort, n note, u unblock, x release`,
		`git liza board                 # / filter, s one status group (ready: what a claim takes, in order), ? keys, q quit`,
		`git liza board --interval 2s   # leases and alarms read every 2s even when nothing moved`,
	}}},
	{"serve", help{usage: serveUsage, category: catTeam, examples: []string{
		`git liza serve                 # prints the address, with ?token= for the levers`,
		`git liza serve --addr 0.0.0.0:7428 --token-file ~/.liza-token    # a phone on the LAN: every page asks for the token`,
	}}},
	{"mcp", help{usage: "mcp [--human]", category: catTeam, examples: []string{
		`git liza mcp                   # started by an agent CLI for a supervised session`,
		`git liza mcp --human           # the operator's levers, for a chat client`,
	}}},
	{"analyze", help{usage: "analyze [--resolve TEXT]", category: catTeam, examples: []string{
		`git liza analyze`,
		`git liza analyze --resolve "rewrote the flaky test"`,
	}}},
	{"sprint", help{usage: "sprint checkpoint | metrics", category: catTeam, examples: []string{
		`git liza sprint checkpoint`,
	}}},
	{"sprint checkpoint", help{usage: "sprint checkpoint", examples: []string{`git liza sprint checkpoint`}}},
	{"sprint metrics", help{usage: "sprint metrics", examples: []string{`git liza sprint metrics --json`}}},
	{"prompt", help{usage: "prompt ROLE [--task ID] [--trigger T] [--tools] | --list | --text NAME", category: catTeam, examples: []string{
		`git liza prompt coder --task task-3`,
		`git liza prompt coder --task task-3 --tools    # as a session with git liza's MCP tools gets it`,
		`git liza prompt --list`,
	}}},
	{"demo", help{usage: "demo [--dir DIR]", category: catTeam, examples: []string{`git liza demo`}}},
	{"diff", help{usage: "diff REV [REV]", category: catBoard, examples: []string{
		`git liza diff refs/liza/state~1           # what the last operation changed`,
		`git liza diff refs/liza/state~10 refs/liza/state~5`,
	}}},
	{"help", help{usage: "help [COMMAND [SUBCOMMAND]]", category: catHelp, examples: []string{
		`git liza help claim`,
		`git liza help task add`,
	}}},
	{"version", help{usage: "version", category: catHelp, examples: []string{`git liza version --json`}}},
	{"install-man", help{usage: "install-man [--dir DIR | --print]", category: catHelp, examples: []string{
		`git liza install-man              # then git liza --help opens it`,
		`git liza install-man --dir ~/.local/share/man/man1`,
	}}},
	{"completion", help{usage: "completion bash|zsh|fish", category: catHelp, examples: []string{
		`git liza completion bash > ~/.local/share/bash-completion/completions/git-liza`,
		`git liza completion zsh > "${fpath[1]}/_git-liza"`,
		`git liza completion fish > ~/.config/fish/conf.d/git-liza.fish`,
	}}},
}
