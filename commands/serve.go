package commands

import (
	"context"

	"github.com/urfave/cli/v3"
)

// ServeProgram is the program that serves git liza serve. It is a program
// of its own (package git-liza-serve, on package web) so that git-liza
// does not link Go's HTTP server and templates, which would cost every
// short command at start-up.
const ServeProgram = "git-liza-serve"

const serveUsage = "serve [--addr HOST:PORT] [--token-file PATH]"

func (e *Env) serveCmd() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "the board in a browser, live: tasks, a task's history, diff and sessions, the audit log, alarms, and the levers (which need the token)",
		Description: "Listens on 127.0.0.1:7428 unless --addr says otherwise; any address other machines reach needs\n" +
			"--token-file, and then every page asks for the token. The levers (pause, resume, abort, note,\n" +
			"unblock) need the token always: without --token-file one is made and printed with the address.\n" +
			"Open the address once with ?token=TOKEN: a cookie keeps it for that browser.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:7428", Usage: "listen on `ADDR`, as HOST:PORT: a loopback address, else --token-file is needed"},
			&cli.StringFlag{Name: "token-file", Usage: "a file only you can read (chmod 600) holding the token, at least 16 characters, on its first line: `PATH`"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, serveUsage); err != nil {
				return err
			}
			prog, err := program(ServeProgram, "git liza serve")
			if err != nil {
				return err
			}
			a := []string{"--addr", cmd.String("addr")}
			if f := cmd.String("token-file"); f != "" {
				a = append(a, "--token-file", f)
			}
			return e.runProgram(ctx, prog, a...)
		},
	}
}
