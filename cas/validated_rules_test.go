package cas

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liza-dev/git-liza/refstore"
)

// TestValidatedKeptPerRuleSet: a git-liza of an older rule set builds
// without a check on what the file of verified tips names. Were the
// commits of this rule set written to the file it reads (validated, shared
// up to rule set 7), an older git-liza run in the same clone (a supervisor
// started before the upgrade, a downgrade) built a commit of rule set 7 on
// one of rule set 8, which no history may hold, and pushed it to a remote
// without the guard, where every clone then stopped on it (exit 4, "older
// than its parent's"). This git-liza still trusts what the older ones
// verified.
func TestValidatedKeptPerRuleSet(t *testing.T) {
	s := initStore(t)
	mustUpdate(t, s, putTasks(task("task-1")))
	mine := tip(t, s)
	if !s.KnownGood(mine) {
		t.Fatal("the commit this store wrote is not known good")
	}
	legacy := filepath.Join(TrustDir(s.Repo.CommonDir), "validated")
	b, _ := os.ReadFile(legacy)
	if strings.Contains(string(b), mine.String()) {
		t.Fatalf("%s, which a git-liza of rule set 7 trusts, names a commit of rule set 8 (%s)", legacy, mine)
	}
	old := refstore.Hash{7, 7, 7}
	if err := os.WriteFile(legacy, []byte(old.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !s.KnownGood(old) {
		t.Error("a commit an older git-liza verified here is not known good")
	}
}
