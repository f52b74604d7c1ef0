package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoExpressionCompiledAtStart: a regular expression held in a
// package-level variable is compiled by the package's initialiser, on
// every run of every command, --version included, whether or not the
// command uses it. Package-level expressions are built on first use
// (sync.OnceValue) or written out as code. The bench is a program of its
// own and not looked at.
func TestNoExpressionCompiledAtStart(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "bench" || path == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					if name := compileCall(v); name != "" {
						t.Errorf("%s: a package-level %s runs before main on every command; build it on first use", fset.Position(v.Pos()), name)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// compileCall names the regexp compiling call e is, directly (not inside a
// function literal), or returns "".
func compileCall(e ast.Expr) string {
	found := ""
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // runs when called, not at start
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "regexp" && strings.Contains(sel.Sel.Name, "Compile") {
					found = "regexp." + sel.Sel.Name
				}
			}
		}
		return found == ""
	})
	return found
}
