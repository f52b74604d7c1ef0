package ops

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/refstore"
)

// derivedTip reads back through the state's history, up to tornMergeDepth
// commits, on every operation that checks the integration branch of a
// board recording no tip: on a board imported without one, every claim
// read hundreds of commits (half of a claim's time on the bench's board of
// 10,000 tasks after a few hundred operations). What it found for the last
// state commit it was asked about is remembered, and the next operation,
// whose tip is usually that commit's child, reads back only to it.
//
// The answer is trusted (a claim is refused on it), so it is kept where
// the validated commits are, in the user's state directory outside the
// repository (cas.TrustDir), and not remembered at all where that falls
// back to the git directory, which an agent may write. The file is
// rewritten in place: a reader that finds it torn, or anything but one
// well-formed line, reads the history instead.
const derivedFile = "derived-tip"

// derived is what derivedTip found for commit: whether a merge or an init
// was met, depth commits back, and the commit it put the branch at (zero
// when it said nothing); found is false when none was met.
type derived struct {
	commit refstore.Hash
	found  bool
	depth  int
	at     refstore.Hash
}

func (s *Service) derivedPath() string {
	dir := cas.TrustDir(s.Repo.CommonDir)
	if strings.HasPrefix(dir, filepath.Clean(s.Repo.CommonDir)+string(filepath.Separator)) {
		return "" // in the git directory: not trusted
	}
	return filepath.Join(dir, derivedFile)
}

// readDerived reads the remembered answer: "COMMIT 1 DEPTH AT" (AT "-"
// for none), or "COMMIT 0 0 -".
func (s *Service) readDerived() (derived, bool) {
	path := s.derivedPath()
	if path == "" {
		return derived{}, false
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 256 {
		return derived{}, false
	}
	text, ok := strings.CutSuffix(string(b), "\n")
	f := strings.Split(text, " ")
	if !ok || len(f) != 4 || (f[1] != "0" && f[1] != "1") {
		return derived{}, false
	}
	var d derived
	d.found = f[1] == "1"
	var okc, oka bool
	d.commit, okc = refstore.ParseHash(f[0])
	depth, err := strconv.Atoi(f[2])
	if f[3] == "-" {
		oka = true
	} else {
		d.at, oka = refstore.ParseHash(f[3])
	}
	if !okc || !oka || err != nil || depth < 0 || (!d.found && (depth != 0 || !d.at.IsZero())) {
		return derived{}, false
	}
	d.depth = depth
	return d, true
}

// derivedRewrite is how many commits past the remembered one derivedTip
// reads back before it remembers the answer for the newer tip.
const derivedRewrite = 8

// rememberDerived keeps d, best effort, unless it is old (read before, if
// ok). The file is written in place, not replaced: a new file each
// operation costs a new inode.
func (s *Service) rememberDerived(d, old derived, ok bool) {
	path := s.derivedPath()
	if path == "" || ok && old == d {
		return
	}
	at := "-"
	if !d.at.IsZero() {
		at = d.at.String()
	}
	found := "0"
	if d.found {
		found = "1"
	}
	line := fmt.Sprintf("%s %s %d %s\n", d.commit, found, d.depth, at)
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		if os.MkdirAll(filepath.Dir(path), 0o700) == nil {
			_ = os.WriteFile(path, []byte(line), 0o600)
		}
	}
}
