package refstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// configEntry is one variable of a git config file. Key is
// "section.name" or "section.subsection.name", with the section and the
// name in lower case (git compares them without case) and the subsection
// as written.
type configEntry struct {
	Key   string
	Value string
	// Scope is where the entry was read: from a file git reads for every
	// repository (the system's, the user's), from the repository's own
	// files (which whoever can write the git directory can write), or from
	// the command line. See contain.go.
	Scope configScope
}

// parseConfigFile reads a git config file (git-config(1), "CONFIGURATION
// FILE") and appends its variables to out in order. include.path is
// followed, relative to the including file; includeIf is not.
func parseConfigFile(path string, depth int, out []configEntry) ([]configEntry, error) {
	return parseConfigFileIf(path, depth, false, out, nil)
}

// parseConfigFileIf is parseConfigFile that, with conditional set, also
// follows every includeIf.*.path whatever its condition: what containment
// scans for settings git may read (contain.go). The path of every file it
// looks for, found or not, is added to files when that is not nil.
func parseConfigFileIf(path string, depth int, conditional bool, out []configEntry, files *[]string) ([]configEntry, error) {
	if files != nil {
		*files = append(*files, path)
	}
	data, err := ReadFile(path)
	if err != nil {
		return out, err
	}
	entries, err := parseConfig(string(data))
	if err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range entries {
		out = append(out, e)
		included := e.Key == "include.path" || conditional && strings.HasPrefix(e.Key, "includeif.") && strings.HasSuffix(e.Key, ".path")
		if !included || depth >= 10 || e.Value == "" {
			continue
		}
		inc := e.Value
		if rest, ok := strings.CutPrefix(inc, "~/"); ok {
			home, _ := os.UserHomeDir()
			inc = filepath.Join(home, rest)
		}
		inc = absFrom(filepath.Dir(path), inc)
		if out, err = parseConfigFileIf(inc, depth+1, conditional, out, files); err != nil && !errors.Is(err, os.ErrNotExist) {
			return out, err
		}
	}
	return out, nil
}

// parseConfig parses the text of a git config file.
func parseConfig(text string) ([]configEntry, error) {
	p := &configParser{s: text, line: 1}
	var out []configEntry
	section := ""
	for {
		p.skipSpace()
		if p.eof() {
			return out, nil
		}
		switch c := p.peek(); {
		case c == '\n':
			p.next()
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			s, err := p.sectionHeader()
			if err != nil {
				return nil, err
			}
			section = s
		case isAlpha(c):
			if section == "" {
				return nil, p.errorf("variable outside a section")
			}
			name, value, err := p.variable()
			if err != nil {
				return nil, err
			}
			out = append(out, configEntry{Key: section + "." + name, Value: value})
		default:
			return nil, p.errorf("unexpected %q", c)
		}
	}
}

type configParser struct {
	s    string
	i    int
	line int
}

func (p *configParser) eof() bool  { return p.i >= len(p.s) }
func (p *configParser) peek() byte { return p.s[p.i] }

func (p *configParser) next() byte {
	c := p.s[p.i]
	p.i++
	if c == '\n' {
		p.line++
	}
	return c
}

func (p *configParser) errorf(format string, args ...any) error {
	return fmt.Errorf("bad config line %d: %s", p.line, fmt.Sprintf(format, args...))
}

// skipSpace skips blanks but not newlines.
func (p *configParser) skipSpace() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t' || p.peek() == '\r') {
		p.i++
	}
}

func (p *configParser) skipLine() {
	for !p.eof() && p.next() != '\n' {
	}
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

// sectionHeader reads [section], [section "subsection"] or the old
// [section.subsection], and returns the key prefix it sets.
func (p *configParser) sectionHeader() (string, error) {
	p.next() // [
	start := p.i
	for !p.eof() && (isKeyChar(p.peek()) || p.peek() == '.') {
		p.i++
	}
	name := strings.ToLower(p.s[start:p.i])
	if name == "" {
		return "", p.errorf("empty section name")
	}
	if !p.eof() && p.peek() == ']' {
		p.i++
		// [section.sub] is the old spelling of [section "sub"], with the
		// subsection in lower case.
		return name, nil
	}
	p.skipSpace()
	if p.eof() || p.peek() != '"' {
		return "", p.errorf("bad section header")
	}
	p.i++
	var sub strings.Builder
	for {
		if p.eof() || p.peek() == '\n' {
			return "", p.errorf("unterminated subsection")
		}
		c := p.next()
		if c == '"' {
			break
		}
		if c == '\\' {
			if p.eof() || p.peek() == '\n' {
				return "", p.errorf("unterminated subsection")
			}
			c = p.next()
		}
		sub.WriteByte(c)
	}
	if p.eof() || p.next() != ']' {
		return "", p.errorf("bad section header")
	}
	return name + "." + sub.String(), nil
}

// variable reads "name", "name =" or "name = value" up to the end of the
// line, joining continued lines.
func (p *configParser) variable() (string, string, error) {
	start := p.i
	for !p.eof() && isKeyChar(p.peek()) {
		p.i++
	}
	name := strings.ToLower(p.s[start:p.i])
	p.skipSpace()
	if p.eof() || p.peek() == '\n' || p.peek() == '#' || p.peek() == ';' {
		p.skipLine()
		return name, "true", nil // a bare name is a boolean true
	}
	if p.next() != '=' {
		return "", "", p.errorf("bad variable %q", name)
	}
	p.skipSpace()
	var v strings.Builder
	quoted := false
	pending := 0 // blanks seen outside quotes, kept only if more follows
	for !p.eof() {
		c := p.peek()
		if c == '\n' {
			break
		}
		p.i++
		switch {
		case c == '\\':
			if p.eof() {
				return "", "", p.errorf("backslash at end of file")
			}
			e := p.next()
			switch e {
			case '\n':
				continue // a continued line
			case 'n':
				e = '\n'
			case 't':
				e = '\t'
			case 'b':
				e = '\b'
			case '\\', '"':
			case '\r':
				if !p.eof() && p.peek() == '\n' {
					p.next()
					continue
				}
				return "", "", p.errorf("bad escape")
			default:
				return "", "", p.errorf("bad escape \\%c", e)
			}
			v.WriteString(strings.Repeat(" ", pending))
			pending = 0
			v.WriteByte(e)
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '#' || c == ';'):
			p.skipLine()
			return name, v.String(), nil
		case !quoted && (c == ' ' || c == '\t' || c == '\r'):
			if v.Len() > 0 {
				pending++ // kept only if more of the value follows
			}
		default:
			v.WriteString(strings.Repeat(" ", pending))
			pending = 0
			v.WriteByte(c)
		}
	}
	if quoted {
		return "", "", p.errorf("unterminated quote")
	}
	return name, v.String(), nil
}
