package contracts

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, one, multi string }{
		{"Retry GET calls", "Retry GET calls", "Retry GET calls"},
		{"", "", ""},
		{"héllo wörld, 日本語, مرحبا, 👩‍💻 ⚠️", "héllo wörld, 日本語, مرحبا, 👩‍💻 ⚠️", "héllo wörld, 日本語, مرحبا, 👩‍💻 ⚠️"},
		{`C:\Users\x1b and \d+`, `C:\Users\x1b and \d+`, `C:\Users\x1b and \d+`},
		{"a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"line\r\n", `line\r\n`, "line\\r\n"},
		{"\x1b]0;pwned\a", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"\x1b[2J\x1b[31mred\x1b[0m", `\x1b[2J\x1b[31mred\x1b[0m`, `\x1b[2J\x1b[31mred\x1b[0m`},
		{"\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil.example/\x1b\click\x1b]8;;\x1b\`, `\x1b]8;;http://evil.example/\x1b\click\x1b]8;;\x1b\`},
		{"invoice\u202efdp.exe", `invoice\u202efdp.exe`, `invoice\u202efdp.exe`},
		{"\u2066a\u2069\u200f\u061c", `\u2066a\u2069\u200f\u061c`, `\u2066a\u2069\u200f\u061c`},
		{"del\x7f c1\u009b bs\b nul\x00", `del\x7f c1\u009b bs\x08 nul\x00`, `del\x7f c1\u009b bs\x08 nul\x00`},
		{"bad \x9b[2J utf8 \xff", `bad \x9b[2J utf8 \xff`, `bad \x9b[2J utf8 \xff`},
		{"zero\u200bwidth\ufeff tag\U000E0041", `zero\u200bwidth\ufeff tag\U000e0041`, `zero\u200bwidth\ufeff tag\U000e0041`},
		{"sep\u2028par\u2029", `sep\u2028par\u2029`, `sep\u2028par\u2029`},
	} {
		if got := Printable(c.in); got != c.one {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.one)
		}
		if got := PrintableText(c.in); got != c.multi {
			t.Errorf("PrintableText(%q) = %q, want %q", c.in, got, c.multi)
		}
	}
}

// TestHiddenEveryRune: the fast paths of hidden agree with the rule for
// every character past ASCII.
func TestHiddenEveryRune(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue // surrogates are not characters in UTF-8
		}
		if got, want := hidden(r), unsafeRune(r, true); got != want {
			t.Errorf("hidden(%U) = %v, want %v", r, got, want)
		}
	}
}

// unsafeRune reports whether r may not reach a terminal raw: the rule of
// Printable, restated independently of its code.
func unsafeRune(r rune, lines bool) bool {
	if lines && (r == '\n' || r == '\t') {
		return false
	}
	if r == 0x200c || r == 0x200d {
		return false
	}
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029 ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || unicode.Is(unicode.Cf, r)
}

// AssertPrintable fails t when out holds a raw control, format or bidi
// character, or a byte that is not UTF-8 (with lines, newlines and tabs
// may stay).
func assertPrintable(t *testing.T, out string, lines bool) {
	t.Helper()
	for i, r := range out {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(out[i:]); n == 1 {
				t.Fatalf("byte %#x that is not UTF-8 survives at %d in %q", out[i], i, out)
			}
		}
		if unsafeRune(r, lines) {
			t.Fatalf("raw %U survives at %d in %q", r, i, out)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"plain", "a\nb\tc", "\x1b]0;t\a\x1b[2J", "\u202e\u2066\u200b", "\xff\x9b", "é日👩‍💻", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		one, multi := Printable(s), PrintableText(s)
		assertPrintable(t, one, false)
		assertPrintable(t, multi, true)
		if strings.Contains(one, "\n") {
			t.Fatalf("Printable(%q) has a newline", s)
		}
		// Escapes are printable ASCII: applying the rule again changes
		// nothing, so two printers in a row do not double them.
		if Printable(one) != one || PrintableText(multi) != multi || PrintableText(one) != one {
			t.Fatalf("not idempotent on %q", s)
		}
		// Text with nothing to escape comes back unchanged, and so does
		// every safe character of any text, in order.
		if IsPrintable(s, false) != (one == s) || IsPrintable(s, true) != (multi == s) {
			t.Fatalf("IsPrintable disagrees with Printable on %q", s)
		}
		if utf8.ValidString(s) {
			var safe []rune
			for _, r := range s {
				if !unsafeRune(r, true) {
					safe = append(safe, r)
				}
			}
			if !containsInOrder(multi, safe) {
				t.Fatalf("PrintableText(%q) = %q lost a safe character", s, multi)
			}
		}
	})
}

// containsInOrder reports whether rs occur in s in order (as a
// subsequence).
func containsInOrder(s string, rs []rune) bool {
	i := 0
	for _, r := range s {
		if i < len(rs) && r == rs[i] {
			i++
		}
	}
	return i == len(rs)
}

func BenchmarkPrintable(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"ascii", "Retry GET calls with exponential backoff and jitter, at most 5 times"},
		{"letters", "Réessayer les appels GET — 日本語のテキスト, mit Übergängen"},
		{"escape", "\x1b]0;pwned\a\x1b[2J invoice\u202efdp.exe"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				_ = Printable(c.s)
			}
		})
	}
}
