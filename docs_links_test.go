package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsLinks: every relative link in README.md and docs/ names a file
// that exists and, with a #fragment, a heading of that file as GitHub
// spells its anchors, so a page moved or a heading renamed cannot leave a
// reader at a dead link.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("docs/*/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(append([]string{"README.md"}, pages...), more...)
	if len(pages) < 10 {
		t.Fatalf("found %d pages: run the test from the module root", len(pages))
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		text := withoutCode(readText(t, page))
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: no file %s", page, target, path)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if !anchorsOf(t, path)[frag] {
				t.Errorf("%s: link %s: %s has no heading whose anchor is #%s", page, target, path, frag)
			}
		}
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withoutCode drops fenced blocks, whose brackets are not links.
func withoutCode(text string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// anchorsOf is the set of anchors of path's headings: lower case, spaces
// to hyphens, punctuation other than hyphens and underscores dropped.
func anchorsOf(t *testing.T, path string) map[string]bool {
	out := map[string]bool{}
	drop := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	for _, line := range strings.Split(withoutCode(readText(t, path)), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if heading == "" || !strings.HasPrefix(strings.TrimLeft(line, "#"), " ") {
			continue
		}
		slug := drop.ReplaceAllString(strings.ToLower(heading), "")
		out[strings.ReplaceAll(slug, " ", "-")] = true
	}
	return out
}
