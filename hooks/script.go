// Package hooks installs git-liza's git hook scripts and runs the handlers
// behind them (`git liza hook NAME`).
//
// The scripts follow git-lfs's etiquette: a thin #!/bin/sh script carrying a
// marker line, a check that git-liza is on PATH (saying how to remove the
// hook when it is not), then `exec git liza hook NAME "$@"`. A hook that is
// not ours is never overwritten: install refuses it, or with --force keeps
// it beside ours as NAME.liza-chained and runs it first, on the same input.
// Uninstall removes only what carries the marker and puts a chained hook
// back.
package hooks

import (
	"fmt"
	"strings"

	"github.com/liza-dev/git-liza/refstore"
)

// The hooks git-liza installs.
const (
	PreCommit            = "pre-commit"
	CommitMsg            = "commit-msg"
	PostCommit           = "post-commit"
	ReferenceTransaction = "reference-transaction"
	PreReceive           = "pre-receive"
)

// ClientHooks are installed in a repository with a work tree; ServerHooks
// in a bare repository that clones push to.
var (
	ClientHooks = []string{PreCommit, CommitMsg, PostCommit, ReferenceTransaction}
	ServerHooks = []string{PreReceive}
)

// AllHooks is every hook git-liza may have installed.
func AllHooks() []string {
	return append(append([]string{}, ClientHooks...), ServerHooks...)
}

// Marker is the line that makes a hook script ours.
const Marker = refstore.HookMarker

// ChainSuffix names the file a foreign hook is kept in when install --force
// chains it: pre-commit becomes pre-commit.liza-chained.
const ChainSuffix = refstore.HookChainSuffix

// readsStdin lists the hooks git feeds on standard input.
var readsStdin = map[string]bool{ReferenceTransaction: true, PreReceive: true}

// ignoresStatus lists the hooks whose exit status git ignores: a chained
// hook's failure cannot stop anything, so ours runs after it regardless.
var ignoresStatus = map[string]bool{PostCommit: true}

// Script is the hook script for name. display is where the hook lives, as
// told to a person whose git-liza is gone (".git/hooks/pre-commit"). When
// chained is true the script first runs the hook kept as name+ChainSuffix
// beside it.
func Script(name, display string, chained bool) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("#!/bin/sh")
	w("%s", Marker)
	guard := fmt.Sprintf(`command -v git-liza >/dev/null 2>&1 || { echo >&2 "git-liza is not on PATH but this repository has its %s hook (%s); remove the hook or install git-liza"; exit 2; }`,
		name, shellEscape(display))
	stdin := readsStdin[name]
	refTx := name == ReferenceTransaction
	receive := name == PreReceive

	if refTx {
		w("# git runs this hook for every ref update in the repository, three times per")
		w("# transaction, so git-liza starts only for a prepared transaction that")
		w("# names %s and that git-liza itself did not start (its own", stateRef)
		w("# updates carry GIT_LIZA_REF_UPDATE=1); the cheap tests come first.")
	}
	if chained {
		w("# The hook that was here before git-liza's is kept as %s%s and runs", name, ChainSuffix)
		if stdin {
			w("# first, on the same input (git gives it once, so it is saved here).")
		} else {
			w("# first.")
		}
		if ignoresStatus[name] {
			w("# git ignores this hook's exit status, so both always run.")
		} else {
			w("# When it fails, so does this hook, and git-liza's part does not run.")
		}
		run := `"$chained" "$@"`
		if stdin {
			w(`input=$(cat)`)
			w(`feed() { if [ -n "$input" ]; then printf '%%s\n' "$input"; fi; }`)
			run = `feed | "$chained" "$@"`
		}
		if !ignoresStatus[name] {
			run += " || exit $?"
		}
		w(`chained="${0%%/*}/%s%s"`, name, ChainSuffix)
		w(`if [ -x "$chained" ]; then %s; fi`, run)
	}
	if receive {
		w("# A push of branches or of refs/liza/ goes to git-liza, which knows which")
		w("# branch is the integration branch (and task branches) from the board it")
		w("# reads; any other push (tags, notes) is none of its business.")
		if !chained {
			w(`input=$(cat)`)
		}
		w(`nl='`)
		w(`'`)
		w(`case "$input$nl" in`)
		w(`*" refs/liza/"*|*" refs/heads/"*) ;;`)
		w(`*) exit 0 ;;`)
		w(`esac`)
		w("# Without git-liza on PATH, a push that touches refs/liza/, the integration")
		w("# branch or a task branch is refused, and any other passes. The branch is")
		w("# config.integration_branch: the key indented by two spaces between the")
		w("# top-level `config:` and the next top-level key (agents' text in liza.yaml")
		w("# is indented deeper), its name quoted either way YAML may quote it.")
		w(`if ! command -v git-liza >/dev/null 2>&1; then`)
		w(`	integ=$(git cat-file blob %s:liza.yaml 2>/dev/null | sed -n -e '/^config:/,/^[^ ]/!d' -e '/^  integration_branch: /!d' -e 's/^  integration_branch: *//' -e 's/ *$//' -e "/^'/{s/^'//;s/'\$//;s/''/'/g;}" -e 's/^"\(.*\)"$/\1/' -e p | head -n 1)`, stateRef)
		w(`	case "$input$nl" in`)
		w(`	*" refs/liza/"*|*" refs/heads/${integ:-integration}$nl"*|*" refs/heads/task/"*)`)
		w(`		echo >&2 "git-liza is not on PATH on this server: pushes to refs/liza/, the integration branch and task branches are refused until it is (%s)"; exit 1 ;;`, shellEscape(display))
		w(`	esac`)
		w(`	exit 0`)
		w(`fi`)
		w(`printf '%%s\n' "$input" | git liza hook %s "$@"`, name)
		return b.String()
	}
	if refTx {
		w(`[ "$1" = prepared ] || exit 0`)
		w(`[ "$GIT_LIZA_REF_UPDATE" = 1 ] && exit 0`)
		if !chained {
			w(`input=$(cat)`)
		}
		w(`nl='`)
		w(`'`)
		w(`case "$nl$input$nl" in`)
		w(`*" %s$nl"*) ;;`, stateRef)
		w(`*) exit 0 ;;`)
		w(`esac`)
	}
	w("%s", guard)
	switch {
	case refTx:
		w(`printf '%%s\n' "$input" | git liza hook %s "$@"`, name)
	case stdin && chained:
		w(`feed | git liza hook %s "$@"`, name)
	default:
		w(`exec git liza hook %s "$@"`, name)
	}
	return b.String()
}

// shellEscape makes s safe inside a double-quoted shell string.
func shellEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`", "\n", " ")
	return r.Replace(s)
}
