// git-liza-http makes the HTTP requests of git-liza (webhook
// notifications, doctor's probe of an agent CLI's endpoint): one request as
// JSON on stdin, its response as JSON on stdout. It is a program of its own
// so that git-liza's short commands do not link Go's HTTP client and TLS.
package main

import (
	"context"
	"os"

	"github.com/liza-dev/git-liza/httpdo"
)

func main() {
	os.Exit(httpdo.Main(context.Background(), os.Stdin, os.Stdout, os.Stderr))
}
