package contracts

import (
	"strconv"
	"strings"
	"time"
)

// The canonical codec's strings: which style the library writes a string
// in, for the strings whose style is known here (see canon.go). A string
// whose style is not known here makes the whole value the library's.

// renderScalar is s as the library writes it in a block mapping or
// sequence, or, when literal, that s is written as a literal block (the
// caller writes its lines); ok is false when the style is not known here.
func renderScalar(s string) (text string, literal, ok bool) {
	if strings.IndexByte(s, '\n') >= 0 {
		return "", true, literalOK(s)
	}
	if !printableASCII(s) {
		return "", false, false
	}
	if s == "" {
		return `""`, false, true
	}
	if !plainResolvesToStr(s) {
		// The library quotes a string that would read back as another
		// type, in double quotes; with no quote or backslash inside,
		// the text goes between them as it is.
		if strings.ContainsAny(s, `"\`) {
			return "", false, false
		}
		return `"` + s + `"`, false, true
	}
	if plainAllowed(s) {
		return s, false, true
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'", false, true
}

// printableASCII reports whether s is made of the bytes 0x20 to 0x7e.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// literalOK reports whether the library writes s (which holds a line
// break) as a literal block this codec writes and reads: printable ASCII
// lines, the first neither empty nor starting with a space (the library
// would add an indentation indicator), no space before a break (the
// library would double-quote), no trailing space, and at most one break
// at the end ("|-" for none, "|" for one).
func literalOK(s string) bool {
	if s[0] == ' ' || s[0] == '\n' || strings.HasSuffix(s, "\n\n") || strings.HasSuffix(s, " ") || strings.Contains(s, " \n") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < 0x20 || s[i] > 0x7e) && s[i] != '\n' {
			return false
		}
	}
	return true
}

// plainResolvesToStr reports whether s (printable ASCII, one line, not
// empty) would read back as a string when written plain and is written
// plain or single-quoted, as the library decides before it picks a style:
// its resolver (nulls, bools, numbers, timestamps), its YAML 1.1 bools and
// base 60 numbers.
func plainResolvesToStr(s string) bool {
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL", "<<",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
		"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false
	}
	switch c := s[0]; {
	case c == '.':
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return !timestamp(s) && !number(s) && !base60(s)
	}
	return true
}

// timestamp reports whether the library reads s as a timestamp: four
// digits and a dash, then one of the forms it tries.
func timestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, layout := range []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// number reports whether the library reads s (which starts with a digit
// or a sign) as an integer or a float.
func number(s string) bool {
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if floatSyntax(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	for _, p := range []struct {
		prefix string
		base   int
	}{{"0b", 2}, {"0o", 8}} {
		if rest, ok := strings.CutPrefix(plain, p.prefix); ok {
			_, err1 := strconv.ParseInt(rest, p.base, 64)
			_, err2 := strconv.ParseUint(rest, p.base, 64)
			if err1 == nil || err2 == nil {
				return true
			}
		} else if rest, ok := strings.CutPrefix(plain, "-"+p.prefix); ok {
			if _, err := strconv.ParseInt("-"+rest, p.base, 64); err == nil {
				return true
			}
		}
	}
	return false
}

// base60 reports whether s is a YAML 1.1 base 60 number, which the
// library quotes when it writes one:
// [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?
func base60(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i == len(s) || s[i] < '0' || s[i] > '9' {
		return false
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '_') {
		i++
	}
	groups := 0
	for i < len(s) && s[i] == ':' {
		i++
		j := i
		for i < len(s) && i-j < 2 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		switch {
		case i-j == 0:
			return false
		case i-j == 2 && s[j] > '5':
			return false
		}
		groups++
	}
	if groups == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '_') {
			i++
		}
	}
	return i == len(s)
}

// floatSyntax reports whether s is a float as YAML 1.2 spells one:
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
func floatSyntax(s string) bool {
	i := 0
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// plainAllowed reports whether the library's emitter writes s (printable
// ASCII, one line, not empty) plain in a block: no space at either end, no
// document marker at the start, no indicator where it would be read as
// one.
func plainAllowed(s string) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		return false
	}
	spaceAfter := func(i int) bool { return i+1 >= len(s) || s[i+1] == ' ' }
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '?', ':', '-':
		if spaceAfter(0) {
			return false
		}
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case ':':
			if spaceAfter(i) {
				return false
			}
		case '#':
			if s[i-1] == ' ' {
				return false
			}
		}
	}
	return true
}
