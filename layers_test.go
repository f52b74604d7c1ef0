package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/liza-dev/git-liza"

// layersDoc is the page whose "## Layers" table is the layer map.
const layersDoc = "docs/architecture.md"

// pendingLayers are rows and imports of the layer map that the page's
// table does not show yet: a package may import what its row there or
// this map allows. Empty when the page is up to date.
var pendingLayers = map[string][]string{}

// layerMap reads the table of the "## Layers" section of layersDoc: each
// package (`ops/`, or `main` for the module root) and the packages of
// ours it may import.
func layerMap(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(layersDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Layers\n")
	if !ok {
		t.Fatal(layersDoc + " has no ## Layers section")
	}
	section, _, _ = strings.Cut(section, "\n#")
	name := regexp.MustCompile("`([a-z][a-z-]*)/?`")
	out := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		pkg := name.FindStringSubmatch(cells[1])[1]
		allowed := []string{}
		for _, m := range name.FindAllStringSubmatch(cells[len(cells)-2], -1) {
			allowed = append(allowed, m[1])
		}
		out[pkg] = allowed
	}
	if len(out) == 0 {
		t.Fatal("the ## Layers section of " + layersDoc + " has no table")
	}
	for pkg, more := range pendingLayers {
		for _, m := range more {
			if !slices.Contains(out[pkg], m) {
				out[pkg] = append(out[pkg], m)
			}
		}
	}
	return out
}

// imports lists the packages of ours that the non-test Go files of dir
// import, by short name ("ops"), and the files' ASTs.
func imports(t *testing.T, dir string) ([]string, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var files []*ast.File
	var out []string
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if rest, ok := strings.CutPrefix(path, module+"/"); ok && !slices.Contains(out, rest) {
				out = append(out, rest)
			}
		}
	}
	return out, files
}

// TestLayers: every package imports only what the layer map (docs/architecture.md) lets
// it, and every package is on the map.
func TestLayers(t *testing.T) {
	layers := layerMap(t)
	dirs := []string{"."}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			if gofiles, _ := filepath.Glob(filepath.Join(e.Name(), "*.go")); len(gofiles) > 0 {
				dirs = append(dirs, e.Name())
			}
		}
	}
	for _, dir := range dirs {
		name := dir
		if dir == "." {
			name = "main"
		}
		allowed, ok := layers[name]
		if !ok {
			t.Errorf("package %s is not on the layer map (%s)", name, layersDoc)
			continue
		}
		got, _ := imports(t, dir)
		for _, im := range got {
			if !slices.Contains(allowed, im) {
				t.Errorf("%s imports %s; the layer map allows %s", name, im, strings.Join(allowed, ", "))
			}
		}
	}
}

// TestAgentCallsOperations: the supervisor acts on the blackboard through
// package ops with typed values. It does not import the command line, and
// builds no git-liza command line to run (in process or not).
func TestAgentCallsOperations(t *testing.T) {
	got, files := imports(t, "agent")
	if slices.Contains(got, "commands") {
		t.Error("agent imports commands")
	}
	if !slices.Contains(got, "ops") {
		t.Error("agent does not use ops")
	}
	argv := map[string]bool{"git-liza": true, "liza": true, "--json": true, "--agent": true, "--generation": true, "supervise": true}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			// codex's own command line, `codex exec --json`, is the one
			// place these words may appear (agent/preset.go).
			if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "codexStream" {
				return false
			}
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && argv[s] {
					t.Errorf("agent builds a git-liza command line: %s", lit.Value)
				}
			}
			return true
		})
	}
}
