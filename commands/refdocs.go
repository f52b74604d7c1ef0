package commands

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
)

// The reference pages under docs/reference/ are written from the command
// tree and helpTexts, as the help pages and the manual page are, so that
// none of the three can say what the others do not. TestReferenceDocs
// fails when the checked-in pages differ from what ReferencePages makes.

// ReferenceIndex is the name of the index page among ReferencePages.
const ReferenceIndex = "README.md"

// ReferencePages returns the reference in Markdown: one page per visible
// command (git-liza-NAME.md; a command's subcommands are sections of its
// page) and the index, keyed by file name.
func ReferencePages() map[string][]byte {
	root := (&Env{}).app()
	prepare(root, "")
	pages := map[string][]byte{}
	var index bytes.Buffer
	fmt.Fprintf(&index, "# git liza: command reference\n\n")
	fmt.Fprintf(&index, "One page per command, generated from the command tree that `git liza help` and the\n")
	fmt.Fprintf(&index, "manual page are written from (`UPDATE_DOCS=1 go test -run TestReferenceDocs ./commands`\n")
	fmt.Fprintf(&index, "rewrites them). [commands.md](../commands.md) has every command in one line, the exit\n")
	fmt.Fprintf(&index, "codes and the options every mutating command takes.\n\n")
	fmt.Fprintf(&index, "    %s\n\n%s.\n", synopsis(root), capitalize(root.Usage))
	cats, byCat := groups(root)
	for _, cat := range cats {
		title := cat
		if title == "" {
			title = "other commands"
		}
		fmt.Fprintf(&index, "\n## %s\n\n", capitalize(title))
		for _, c := range byCat[cat] {
			file := referenceFile(c)
			fmt.Fprintf(&index, "- [git liza %s](%s): %s\n", c.Name, file, mdText(c.Usage))
			pages[file] = referencePage(c)
		}
	}
	fmt.Fprintf(&index, "\n## Global options\n\nEvery command takes these (before or after its name):\n\n")
	writeMDFlags(&index, flagDocs(root.VisibleFlags(), true))
	if h, _ := helpFor(""); len(h.examples) > 0 {
		fmt.Fprintf(&index, "\n## Examples\n\n")
		writeMDExamples(&index, h.examples)
	}
	pages[ReferenceIndex] = index.Bytes()
	return pages
}

// referenceFile is the page of a top-level command: git-liza-claim.md.
func referenceFile(c *cli.Command) string {
	return "git-liza-" + c.Name + ".md"
}

// referencePage is the page of one top-level command.
func referencePage(c *cli.Command) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# git liza %s\n\n", c.Name)
	fmt.Fprintf(&b, "<!-- Generated from the command tree: UPDATE_DOCS=1 go test -run TestReferenceDocs ./commands -->\n\n")
	fmt.Fprintf(&b, "%s.\n", mdText(capitalize(c.Usage)))
	if note := platformNote(c.Name); note != "" {
		fmt.Fprintf(&b, "\n%s\n", mdText(note))
	}
	subs := visible(c)
	if len(subs) == 0 {
		fmt.Fprintln(&b)
		writeMDCommand(&b, c, c.Name, "##")
	} else {
		fmt.Fprintf(&b, "\n    %s\n\nSubcommands:\n\n", synopsis(c))
		for _, sub := range subs {
			fmt.Fprintf(&b, "- [git liza %s %s](#%s): %s\n", c.Name, sub.Name, anchor("git liza "+c.Name+" "+sub.Name), mdText(sub.Usage))
		}
		for _, sub := range subs {
			name := c.Name + " " + sub.Name
			fmt.Fprintf(&b, "\n## git liza %s\n\n%s.\n\n", name, mdText(capitalize(sub.Usage)))
			writeMDCommand(&b, sub, name, "###")
		}
	}
	fmt.Fprintf(&b, "\nGlobal options: see [the index](%s#global-options).\n", ReferenceIndex)
	return b.Bytes()
}

// writeMDCommand writes a command's usage line, options and examples;
// level is the heading level of their titles.
func writeMDCommand(b *bytes.Buffer, c *cli.Command, name, level string) {
	fmt.Fprintf(b, "    %s\n", synopsis(c))
	if docs := flagDocs(c.VisibleFlags(), false); len(docs) > 0 {
		fmt.Fprintf(b, "\n%s Options\n\n", level)
		writeMDFlags(b, docs)
	}
	if h, _ := helpFor(name); len(h.examples) > 0 {
		fmt.Fprintf(b, "\n%s Examples\n\n", level)
		writeMDExamples(b, h.examples)
	}
}

func writeMDFlags(b *bytes.Buffer, docs []flagDoc) {
	for _, d := range docs {
		fmt.Fprintf(b, "- `%s`: %s\n", d.term, mdText(d.usage))
	}
}

func writeMDExamples(b *bytes.Buffer, examples []string) {
	for _, ex := range examples {
		fmt.Fprintf(b, "    %s\n", ex)
	}
}

// mdText escapes the characters that Markdown would read as markup in a
// usage text (no usage means them as such).
func mdText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "<", `&lt;`, "`", "\\`", "[", `\[`, "]", `\]`).Replace(s)
}

// anchor is the id GitHub gives a heading: lower case, spaces to hyphens,
// other punctuation dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
