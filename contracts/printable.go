package contracts

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text an agent wrote (a block reason, a note, a verdict's reason, a
// description) reaches people's terminals through every printer of
// git-liza. Written raw, an escape sequence in it sets the window title,
// clears the screen to draw a fake board, colours text or makes a link
// that points elsewhere than it says; a bidi override shows characters in
// another order than they are stored. Printable and PrintableText are the
// one rule every human-facing printer applies: such characters are shown
// as visible escapes, everything else as written.
//
// What is escaped:
//   - the C0 controls, DEL and the C1 controls (U+0080-U+009F): ESC, BEL,
//     CR, backspace and CSI start sequences or move the cursor;
//   - format characters (Unicode category Cf): the bidi embeddings,
//     overrides and isolates (U+202A-U+202E, U+2066-U+2069), the marks
//     LRM, RLM and ALM, zero-width spaces, word joiners, the byte order
//     mark, soft hyphens and the invisible tag characters (U+E0000-
//     U+E007F). They reorder text or hide it. ZWNJ and ZWJ (U+200C,
//     U+200D) are kept: scripts such as Persian and the Indic ones need
//     them to shape words, and emoji sequences to join;
//   - the line and paragraph separators U+2028 and U+2029;
//   - bytes that are not UTF-8 (a terminal may read 0x9b as CSI).
//
// How: \n, \t and \r by those names; other ASCII controls and bytes that
// are not UTF-8 as \xNN; other characters as \uNNNN (\UNNNNNNNN past
// U+FFFF), as Go and JSON spell them. The spelling is for eyes: a
// backslash in the text itself is not doubled, so that paths and regular
// expressions read as written. "\x1b" on a board may thus be an escape or
// the four characters an agent typed; either way the terminal shows it
// and nothing else. The exact text is what show and export print (YAML)
// and what --json gives.

// Printable returns s with every character a terminal would act on, or
// that reorders or hides text, spelled as a visible escape; newlines and
// tabs too, so that the result is one line (and a tab cannot shift a
// table's columns). Text without any such character is returned as is.
func Printable(s string) string { return printable(s, false) }

// PrintableText is Printable for text of several lines: newlines and tabs
// are kept.
func PrintableText(s string) string { return printable(s, true) }

func printable(s string, lines bool) string {
	i := firstUnprintable(s, lines)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if keepByte(c, lines) {
				b.WriteByte(c)
			} else {
				writeByteEscape(&b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeByteEscape(&b, c)
		case hidden(r):
			writeRuneEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstUnprintable is the index of the first byte of s Printable would
// change, or len(s): printable ASCII, the common case, costs one
// comparison a byte.
func firstUnprintable(s string, lines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !keepByte(c, lines) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || hidden(r) {
			return i
		}
		i += n
	}
	return len(s)
}

// Unprintable reports whether Printable escapes the character r (an
// invalid byte reads as utf8.RuneError, and is escaped too).
func Unprintable(r rune) bool {
	if r < utf8.RuneSelf {
		return !keepByte(byte(r), false)
	}
	return r == utf8.RuneError || hidden(r)
}

// keepByte reports whether the ASCII byte c is shown as is.
func keepByte(c byte, lines bool) bool {
	if c >= 0x20 && c != 0x7f {
		return true
	}
	return lines && (c == '\n' || c == '\t')
}

// hidden reports whether the non-ASCII character r is escaped: a C1
// control, a line or paragraph separator, or a format character other than
// the joiners.
func hidden(r rune) bool {
	switch {
	case r <= 0x9f:
		return true // C1 (r >= 0x80 here)
	case r < 0x600:
		// Latin, Greek, Cyrillic, Hebrew...: the soft hyphen is the one
		// format character below the Arabic block.
		return r == 0xad
	case r >= 0x2000 && r <= 0x206f:
		// General punctuation, where dashes and quotes live: the zero
		// widths and marks, the separators, the bidi embeddings and
		// overrides, the invisible operators and the isolates.
		return r >= 0x200b && r <= 0x200f && r != 0x200c && r != 0x200d ||
			r >= 0x2028 && r <= 0x202e || r >= 0x2060 && r != 0x2065
	}
	return unicode.Is(unicode.Cf, r)
}

func writeByteEscape(b *strings.Builder, c byte) {
	switch c {
	case '\n':
		b.WriteString(`\n`)
	case '\t':
		b.WriteString(`\t`)
	case '\r':
		b.WriteString(`\r`)
	default:
		const hex = "0123456789abcdef"
		b.WriteString(`\x`)
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
}

func writeRuneEscape(b *strings.Builder, r rune) {
	h := strconv.FormatInt(int64(r), 16)
	if r > 0xffff {
		b.WriteString(`\U`)
		b.WriteString(strings.Repeat("0", 8-len(h)))
	} else {
		b.WriteString(`\u`)
		b.WriteString(strings.Repeat("0", 4-len(h)))
	}
	b.WriteString(h)
}

// IsPrintable reports whether Printable (lines false) or PrintableText
// (lines true) would leave s as it is: what a test asserts of a printer's
// output.
func IsPrintable(s string, lines bool) bool { return firstUnprintable(s, lines) == len(s) }

// FirstLine is the first line of s, with the space around it trimmed: what
// one line of an error or a message says.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
