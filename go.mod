module github.com/liza-dev/git-liza

go 1.26.8

require (
	github.com/rogpeppe/go-internal v1.16.0
	github.com/sergi/go-diff v1.4.0
	github.com/urfave/cli/v3 v3.14.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/term v0.47.0
)

require (
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
