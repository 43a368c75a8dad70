// Package apicheck holds one test: no exported name of a package a user can import
// mentions a type from an internal package, which another module can neither name nor
// implement.
package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoExportedNameMentionsAnInternalType reads every non-test file of every public
// package of the module and reports each exported declaration (function, method of an
// exported type, exported field, type, variable or constant) whose type refers to an
// identifier of an internal package.
func TestNoExportedNameMentionsAnInternalType(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Dir}}", "github.com/feedkit/feedkit/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		path, dir, _ := strings.Cut(line, " ")
		if strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal") {
			continue
		}
		checked++
		for _, problem := range checkDir(t, dir) {
			t.Errorf("%s: %s", path, problem)
		}
	}
	if checked < 10 {
		t.Fatalf("only %d public packages found: the listing is wrong", checked)
	}
}

// checkDir returns the exported declarations of the package in dir that mention an
// internal package's identifier.
func checkDir(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" {
			return nil // a command: nothing to import
		}
		internal := internalImports(f)
		if len(internal) == 0 {
			continue
		}
		report := func(pos token.Pos, what string, expr ast.Node) {
			if ref := mentions(expr, internal); ref != "" {
				problems = append(problems, fset.Position(pos).String()+": "+what+" mentions "+ref)
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedReceiver(d.Recv)) {
					continue
				}
				report(d.Pos(), "func "+d.Name.Name, d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							checkType(s.Name.Name, s.Type, report)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Type != nil {
								report(n.Pos(), n.Name, s.Type)
							}
							if n.IsExported() && s.Type == nil {
								// An untyped declaration takes its value's type, which shows
								// in a composite literal (T{...}, &T{...}). A value re-exported
								// from an internal package (an error, a constant) is of a type
								// anyone can name, and is fine.
								for _, v := range s.Values {
									if u, ok := v.(*ast.UnaryExpr); ok && u.Op == token.AND {
										v = u.X
									}
									if c, ok := v.(*ast.CompositeLit); ok && c.Type != nil {
										report(n.Pos(), n.Name, c.Type)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return problems
}

// checkType reports the exported parts of a type declaration: the whole of an alias or a
// defined non-struct type, the exported and embedded fields of a struct, the methods of an
// interface.
func checkType(name string, typ ast.Expr, report func(token.Pos, string, ast.Node)) {
	switch tt := typ.(type) {
	case *ast.StructType:
		for _, f := range tt.Fields.List {
			if len(f.Names) == 0 {
				report(f.Pos(), name+" (embedded)", f.Type)
			}
			for _, n := range f.Names {
				if n.IsExported() {
					report(n.Pos(), name+"."+n.Name, f.Type)
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range tt.Methods.List {
			report(m.Pos(), name+" method", m.Type)
		}
	default:
		report(typ.Pos(), "type "+name, typ)
	}
}

// internalImports maps the names a file imports internal packages under to their paths.
func internalImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !strings.Contains(path, "/internal/") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = path
	}
	return m
}

// mentions returns the first selector X.Y in n whose X is an internal import.
func mentions(n ast.Node, internal map[string]string) string {
	var found string
	ast.Inspect(n, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				if path, ok := internal[x.Name]; ok {
					found = path + "." + sel.Sel.Name
				}
			}
		}
		return true
	})
	return found
}

func exportedReceiver(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
		case *ast.IndexExpr:
			typ = x.X
		case *ast.IndexListExpr:
			typ = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
