package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

const referenceDir = "../docs/reference"

// TestReferenceDocs: docs/reference/ holds exactly the pages the command
// tree makes, byte for byte; UPDATE_DOCS=1 rewrites them (and removes a
// page of a command that is gone).
func TestReferenceDocs(t *testing.T) {
	pages := ReferencePages()
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.MkdirAll(referenceDir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(referenceDir, "*.md"))
		for _, p := range old {
			if _, ok := pages[filepath.Base(p)]; !ok {
				os.Remove(p)
			}
		}
		for name, b := range pages {
			if err := os.WriteFile(filepath.Join(referenceDir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const fix = "the reference pages are out of date: run UPDATE_DOCS=1 go test -run TestReferenceDocs ./commands and commit docs/reference/"
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(referenceDir, name))
		switch {
		case err != nil:
			t.Errorf("docs/reference/%s: %v; %s", name, err, fix)
		case !bytes.Equal(got, want):
			t.Errorf("docs/reference/%s differs from the command tree; %s", name, fix)
		}
	}
	have, _ := filepath.Glob(filepath.Join(referenceDir, "*.md"))
	for _, p := range have {
		if _, ok := pages[filepath.Base(p)]; !ok {
			t.Errorf("docs/reference/%s is the page of no command; %s", filepath.Base(p), fix)
		}
	}
}

// TestReferencePagesCoverTree: every visible command has a page (its
// subcommands a section of it) naming each of its options and examples,
// and the index links every page; hidden commands have none.
func TestReferencePagesCoverTree(t *testing.T) {
	pages := ReferencePages()
	root := (&Env{}).app()
	prepare(root, "")
	index := string(pages[ReferenceIndex])
	for _, c := range root.Commands {
		file := referenceFile(c)
		page, ok := pages[file]
		if c.Hidden {
			if ok {
				t.Errorf("hidden command %s has a page", c.Name)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no page", c.Name)
			continue
		}
		if !strings.Contains(index, "]("+file+")") {
			t.Errorf("the index does not link %s", file)
		}
		check := func(cmd *cli.Command, name string) {
			if !bytes.Contains(page, []byte("    "+synopsis(cmd)+"\n")) {
				t.Errorf("%s: %s lacks the usage line %q", name, file, synopsis(cmd))
			}
			for _, d := range flagDocs(cmd.VisibleFlags(), false) {
				if !bytes.Contains(page, []byte("- `"+d.term+"`: ")) {
					t.Errorf("%s: %s lacks the option %s", name, file, d.term)
				}
			}
			h, _ := helpFor(name)
			for _, ex := range h.examples {
				if !bytes.Contains(page, []byte("    "+ex+"\n")) {
					t.Errorf("%s: %s lacks the example %q", name, file, ex)
				}
			}
		}
		if subs := visible(c); len(subs) > 0 {
			for _, sub := range subs {
				check(sub, c.Name+" "+sub.Name)
			}
		} else {
			check(c, c.Name)
		}
	}
	var names []string
	for name := range pages {
		names = append(names, name)
	}
	slices.Sort(names)
	if !slices.Contains(names, "git-liza-claim.md") || !slices.Contains(names, "git-liza-task.md") {
		t.Errorf("pages %v", names)
	}
}

func TestAnchor(t *testing.T) {
	for in, want := range map[string]string{
		"git liza task add":   "git-liza-task-add",
		"Typed tools: `mcp`":  "typed-tools-mcp",
		"Being called":        "being-called",
		"install-man (--dir)": "install-man---dir",
	} {
		if got := anchor(in); got != want {
			t.Errorf("anchor(%q) = %q, want %q", in, got, want)
		}
	}
}
