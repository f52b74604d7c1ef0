#!/bin/sh
# The scripted agent of docs/tutorial.md (TestTutorial): what a real agent
# CLI does there with the tutorial's two tasks, through git liza commands,
# as its supervisor starts it (LIZA_ROLE, LIZA_TASK, LIZA_WORKTREE,
# LIZA_PROMPT_FILE; LIZA_AGENT_ID makes git liza act as this agent).
set -e
cd "$LIZA_WORKTREE"
case "$LIZA_ROLE/$LIZA_TASK" in
coder/greet)
	git liza checkpoint greet --intent "bin/greet and its test" \
		--validation "sh tests/greet_test.sh" --files bin/greet,tests/greet_test.sh
	mkdir -p bin tests
	if grep -q 'usage: greet' "$LIZA_PROMPT_FILE"; then
		# The rejection's feedback is in this session's prompt.
		printf '#!/bin/sh\ncase "$1" in\n--help) echo "usage: greet [NAME]" ;;\n*) echo "Hello, ${1:-World}!" ;;\nesac\n' >bin/greet
		printf '#!/bin/sh\nset -e\n[ "$(sh bin/greet Ada)" = "Hello, Ada!" ]\n[ "$(sh bin/greet)" = "Hello, World!" ]\n[ "$(sh bin/greet --help)" = "usage: greet [NAME]" ]\n' >tests/greet_test.sh
		msg="greet: --help prints the usage line"
	else
		printf '#!/bin/sh\necho "Hello, ${1:-World}!"\n' >bin/greet
		printf '#!/bin/sh\nset -e\n[ "$(sh bin/greet Ada)" = "Hello, Ada!" ]\n[ "$(sh bin/greet)" = "Hello, World!" ]\n' >tests/greet_test.sh
		msg="greet: bin/greet NAME"
	fi
	git add -A && git commit -q -m "$msg"
	git liza submit greet
	;;
coder/shout)
	if ! grep -q 'HELLO, ADA' "$LIZA_PROMPT_FILE"; then
		git liza task block shout \
			--reason "specs/vision.md leaves the shout style undecided and says to ask the maintainer" \
			--question "What is the shout style: capitals, more exclamation marks, something else?"
		exit 0
	fi
	git liza checkpoint shout --intent "bin/shout in capitals, as the note says" \
		--validation "sh tests/shout_test.sh" --files bin/shout,tests/shout_test.sh
	mkdir -p bin tests
	printf '#!/bin/sh\nsh bin/greet ${1:+"$1"} | tr a-z A-Z\n' >bin/shout
	printf '#!/bin/sh\nset -e\n[ "$(sh bin/shout Ada)" = "HELLO, ADA!" ]\n' >tests/shout_test.sh
	git add -A && git commit -q -m "shout: bin/shout NAME in capitals"
	git liza submit shout
	;;
code-reviewer/*)
	if sh scripts/integration-test.sh; then
		git liza verdict "$LIZA_TASK" approve
	else
		git liza verdict "$LIZA_TASK" reject --reason "scripts/integration-test.sh fails"
	fi
	;;
*)
	echo "the tutorial's agent has no script for $LIZA_ROLE on $LIZA_TASK" >&2
	exit 1
	;;
esac
