package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFilesLayered: the package's files refer to one another without a
// circle — each file's declarations use only those of files below it
// (package doc) — as the type checker resolves the names: a function, a
// type, a method, a field or a package-level value declared in another
// file. Imports are checked as empty packages, so only this package's
// own names are resolved.
func TestFilesLayered(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	fake := importerFunc(func(p string) (*types.Package, error) {
		pkg := types.NewPackage(p, path.Base(p))
		pkg.MarkComplete()
		return pkg, nil
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: fake, Error: func(error) {}} // the imports' names stay unresolved
	pkg, _ := conf.Check("runner", fset, files, info)
	edges := map[string]map[string][]string{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg {
			continue
		}
		if v, ok := obj.(*types.Var); ok && !v.IsField() && obj.Parent() != pkg.Scope() {
			continue // a local
		}
		from, to := fset.Position(id.Pos()).Filename, fset.Position(obj.Pos()).Filename
		if from == to {
			continue
		}
		if edges[from] == nil {
			edges[from] = map[string][]string{}
		}
		if !slices.Contains(edges[from][to], obj.Name()) {
			edges[from][to] = append(edges[from][to], obj.Name())
		}
	}
	if len(edges) < 10 {
		t.Fatalf("only %d files refer to others: the type check resolved too little", len(edges))
	}
	// A circle is a path back to where it started.
	state := map[string]int{} // 1 on the path, 2 done
	var stack []string
	var visit func(f string) bool
	visit = func(f string) bool {
		state[f] = 1
		stack = append(stack, f)
		for _, to := range sortedKeys(edges[f]) {
			switch state[to] {
			case 1:
				i := slices.Index(stack, to)
				var steps []string
				for k := i; k < len(stack); k++ {
					next := to
					if k+1 < len(stack) {
						next = stack[k+1]
					}
					steps = append(steps, stack[k]+" → "+next+" ("+strings.Join(edges[stack[k]][next], ", ")+")")
				}
				t.Errorf("files refer to one another in a circle: %s", strings.Join(steps, "; "))
				return false
			case 0:
				if !visit(to) {
					return false
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[f] = 2
		return true
	}
	for _, f := range sortedKeys(edges) {
		if state[f] == 0 && !visit(f) {
			return
		}
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	slices.Sort(k)
	return k
}
