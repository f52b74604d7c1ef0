package ops

// UnderRules is a copy of s whose writes follow an older rule set, as an
// older git-liza made them: what the tests of an upgrade build old boards
// with.
func (s *Service) UnderRules(rules int) *Service {
	c := *s
	c.rules = rules
	return &c
}
