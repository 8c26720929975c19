package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/spec"
)

// kindNameUses are the places outside a kind's own value where xp's code
// compares with, switches over or keys a map by a kind's name, each with
// why: TestNoSwitchOverKinds allows these and no other.
var kindNameUses = map[string]string{
	"mech/custext.go mapping":        "CusText's mapping parameter, not the analysis of that name",
	"mech/diffractor.go tem":         "1-Diffractor's method parameter's value, not the mechanism",
	"results/paired.go baseline":     "the word a user types for the baseline line, not the model kind",
	"experiments/validate.go select": "Algorithm 2's loss and start, checked against the stages before it (validateSelect)",
}

// TestNoSwitchOverKinds: outside the descriptors (spec) and each kind's
// own value, no Go file names a mechanism, analysis, stage, model or
// dataset to decide on it — in a case, an == or !=, or a map key — so
// that adding a kind touches its own file, its test and the generated
// docs (docs/extending.md), and what xp knows of a kind is read from its
// descriptor. kindNameUses lists the exceptions, each with its reason; one
// that no longer occurs fails too.
func TestNoSwitchOverKinds(t *testing.T) {
	names := map[string]string{}
	for _, k := range []spec.Kind{spec.Mechanism, spec.Analysis, spec.Stage, spec.Model} {
		for _, n := range spec.Names(k) {
			names[n] = string(k)
		}
	}
	for _, s := range datasets.Specs() {
		names[s.Name] = "dataset"
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "build" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		check := func(e ast.Expr, how string) {
			b, ok := e.(*ast.BasicLit)
			if !ok || b.Kind != token.STRING {
				return
			}
			s, _ := strconv.Unquote(b.Value)
			kind, isName := names[s]
			if !isName {
				return
			}
			if _, ok := kindNameUses[rel+" "+s]; ok {
				seen[rel+" "+s] = true
				return
			}
			t.Errorf("%s: %s %q, the %s: read what it needs from its descriptor or kind value instead (or list the use, with its reason, in kindNameUses)", fset.Position(e.Pos()), how, s, kind)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CaseClause:
				for _, e := range x.List {
					check(e, "case")
				}
			case *ast.BinaryExpr:
				if x.Op == token.EQL || x.Op == token.NEQ {
					check(x.X, x.Op.String())
					check(x.Y, x.Op.String())
				}
			case *ast.KeyValueExpr:
				check(x.Key, "map key")
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for use := range kindNameUses {
		if !seen[use] {
			t.Errorf("kindNameUses lists %q, which no longer occurs: remove it", use)
		}
	}
}
