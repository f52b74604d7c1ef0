package notify

import (
	"os"
	"testing"

	"github.com/liza-dev/git-liza/httpcall"
	"github.com/liza-dev/git-liza/httpdo"
)

// The webhook's requests are made in the test's process (the program
// git-liza-http runs the same httpdo.Do; httpcall's own tests run the
// program).
func TestMain(m *testing.M) {
	httpcall.Exchange = httpdo.Do
	os.Exit(m.Run())
}
