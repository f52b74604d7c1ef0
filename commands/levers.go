package commands

import "github.com/urfave/cli/v3"

// taskLeverCmds are the planner's and the human's levers on one task.
func (e *Env) taskLeverCmds() []*cli.Command { return nil }

// leverCmds are the commands every role uses to speak on the blackboard.
func (e *Env) leverCmds() []*cli.Command { return nil }
