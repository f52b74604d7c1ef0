package ops_test

import (
	"testing"

	"github.com/liza-dev/git-liza/ops"
)

func TestCompactCounts(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 999: "999", 4312: "4,312", 99999: "99,999", 100000: "100k", 123456: "123k",
		1234567: "1.23M", 2000000: "2M", 12500000: "12.5M", 999999999: "1B", 999999: "1M", 1500000000: "1.5B",
	} {
		if got := ops.Compact(n); got != want {
			t.Errorf("Compact(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 100: "100", 1000: "1,000", 123456789: "123,456,789", -4312: "-4,312"} {
		if got := ops.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
