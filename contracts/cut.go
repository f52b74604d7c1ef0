package contracts

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The mark CutText leaves where it cut: " […N characters cut…] ".
const (
	cutOpen  = " […"
	cutClose = " characters cut…] "
)

// CutText is s cut to max characters when it is longer: two thirds from
// its start and one third from its end (a test's output ends with what
// failed), marked between them with how many characters went. lost is
// that count: 0 when s fits, and comes back as it is.
func CutText(s string, max int) (cut string, lost int) {
	return cutParts(s, "", 0, max)
}

// CutAgain is CutText of a text that CutText may have cut already: one
// that carries its mark is cut again from both ends of what it kept, and
// the mark counts all it lost (lost is not 0 even when it fits).
func CutAgain(s string, max int) (cut string, lost int) {
	if head, tail, n, ok := splitCut(s); ok {
		return cutParts(head, tail, n, max)
	}
	return CutText(s, max)
}

// cutParts cuts the text whose start is head and end is tail (none: head
// is all of it), which lost lost characters between them already.
func cutParts(head, tail string, lost, max int) (string, int) {
	hn, tn := utf8.RuneCountInString(head), utf8.RuneCountInString(tail)
	mark := func(lost int) string { return cutOpen + strconv.Itoa(lost) + cutClose }
	switch {
	case hn+tn <= max && lost == 0:
		return head, 0
	case hn+tn <= max:
		return head + mark(lost) + tail, lost
	}
	keepHead := min(hn, max*2/3)
	if tail == "" {
		// One text: its end is the tail.
		lost = hn - max
		return firstRunes(head, keepHead) + mark(lost) + lastRunes(head, max-keepHead), lost
	}
	keepTail := min(tn, max-keepHead)
	lost += hn - keepHead + tn - keepTail
	return firstRunes(head, keepHead) + mark(lost) + lastRunes(tail, keepTail), lost
}

// splitCut splits a text CutText cut into what it kept before and after
// its mark, and how many characters it lost.
func splitCut(s string) (head, tail string, lost int, ok bool) {
	i := strings.Index(s, cutOpen)
	if i < 0 {
		return "", "", 0, false
	}
	rest := s[i+len(cutOpen):]
	j := strings.Index(rest, cutClose)
	if j < 0 {
		return "", "", 0, false
	}
	n, err := strconv.Atoi(rest[:j])
	if err != nil || n < 0 {
		return "", "", 0, false
	}
	return s[:i], rest[j+len(cutClose):], n, true
}

// firstRunes is the first n characters of s.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// lastRunes is the last n characters of s.
func lastRunes(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
