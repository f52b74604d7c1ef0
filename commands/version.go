package commands

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/urfave/cli/v3"
)

// Version is what git liza version reports: the module's version and the
// commit it was built from, as the Go toolchain recorded them in the
// binary.
type Version struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
}

// buildVersion reads the build information of the running binary.
func buildVersion() Version {
	v := Version{Version: "(unknown)"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Go = info.GoVersion
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (v Version) String() string {
	s := "git-liza version " + v.Version
	if v.Commit != "" {
		s += " (commit " + short(v.Commit)
		if v.CommitTime != "" {
			s += ", " + v.CommitTime
		}
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s
}

func (e *Env) versionCmd() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "git-liza's version and the commit it was built from",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if _, err := args(cmd, 0, 0, "version"); err != nil {
				return err
			}
			return e.printVersion(cmd.Bool("json"))
		},
	}
}

func (e *Env) printVersion(asJSON bool) error {
	v := buildVersion()
	if asJSON {
		return (&session{Env: e}).printJSON(v)
	}
	_, err := fmt.Fprintln(e.Stdout, v)
	return err
}
