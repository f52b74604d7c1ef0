package ops

import (
	"context"

	"github.com/liza-dev/git-liza/cas"
	"github.com/liza-dev/git-liza/contracts"
)

// UnderRules is a copy of s whose writes follow an older rule set, as an
// older git-liza made them: what the tests of an upgrade build old boards
// with.
func (s *Service) UnderRules(rules int) *Service {
	c := *s
	c.rules = rules
	return &c
}

// SendBack records that task id, awaiting review, does not merge onto the
// integration tip, without checking: what a reviewer's forged write would
// say.
func (s *Service) SendBack(id, integ, reason string) error {
	var review string
	if err := s.view(func(tx *cas.Tx) error {
		t, err := tx.MustTask(id)
		if t != nil {
			review = t.ReviewCommit
		}
		return err
	}); err != nil {
		return err
	}
	_, err := s.write(context.Background(), Call{}, kindConflictReview, conflictInput{Task: id, ReviewCommit: review, Integration: integ,
		Reason: reason, Checked: contracts.CheckedReview}, nil)
	return err
}
