package weft_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPublicAPINamesNoInternalType reads every public package of the module
// as go doc shows it (exported declarations, their signatures and exported
// fields) and lists each one naming a type of a package under internal/.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	var found []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "internal", "examples", "testdata", "node_modules":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		found = append(found, internalNames(t, path)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	// A program outside the module cannot build a value of an internal
	// type, so no public declaration may name one.
	for _, f := range slices.Compact(found) {
		t.Errorf("public API names an internal type: %s", f)
	}
}

// internalNames lists the exported declarations of one file that name a
// type of an internal package.
func internalNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name.Name == "main" {
		return nil
	}
	internal := map[string]bool{} // import names of internal packages
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !strings.Contains(p, "/internal/") {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		internal[name] = true
	}
	if len(internal) == 0 {
		return nil
	}
	dir := filepath.ToSlash(filepath.Dir(path))
	var out []string
	report := func(decl string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && internal[x.Name] {
					out = append(out, dir+": "+decl+": "+x.Name+"."+sel.Sel.Name)
				}
			}
			return true
		})
	}
	ast.FileExports(f) // what go doc shows: exported names, exported fields
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil {
				recv := receiverName(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = recv + "." + name
			}
			report(name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					reportType(s, report)
				case *ast.ValueSpec:
					if s.Type != nil {
						report(s.Names[0].Name, s.Type)
					}
				}
			}
		}
	}
	return out
}

// reportType reports a type's fields and interface methods one by one.
func reportType(s *ast.TypeSpec, report func(string, ast.Node)) {
	var fields *ast.FieldList
	switch ty := s.Type.(type) {
	case *ast.StructType:
		fields = ty.Fields
	case *ast.InterfaceType:
		fields = ty.Methods
	default:
		report(s.Name.Name, s.Type)
		return
	}
	for _, field := range fields.List {
		name := "(embedded)"
		if len(field.Names) > 0 {
			name = field.Names[0].Name
		}
		report(s.Name.Name+"."+name, field.Type)
	}
}

func receiverName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}
