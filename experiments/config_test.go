package experiments

import (
	"strings"
	"testing"
)

const good = `name: t
dataset:
  name: sst2
embedding:
  path: e.vec
mechanisms:
  - name: vickrey
    epsilon: [1, 5]
    grid:
      t: [0.25, 0.75]
apply: [none, train, test]
seeds: [1, 2]
`

func TestParseAndCells(t *testing.T) {
	c, err := Parse("x.yaml", []byte(good), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dataset.Test != "dev" || c.Model.Kind != "bilstm" || c.Train.Epochs != 3 {
		t.Errorf("defaults: %+v", c)
	}
	cells := c.Cells()
	// 2 baseline + 2 t × 2 ε × 2 modes × 2 seeds.
	if len(cells) != 18 {
		t.Fatalf("%d cells", len(cells))
	}
	if cells[0].Mode != "none" || cells[2].Setting() != "vickrey t=0.25" || cells[2].Epsilon != 1 {
		t.Errorf("order: %v, %v", cells[0], cells[2])
	}
	in := Inputs{Data: "d", Embedding: "e"}
	keys := map[string]bool{}
	for _, cell := range cells {
		keys[c.Key(cell, in)] = true
	}
	if len(keys) != len(cells) {
		t.Errorf("%d distinct keys for %d cells", len(keys), len(cells))
	}
	// Settings that do not change results do not change keys; inputs do.
	c2, _ := Parse("elsewhere.yaml", []byte(good), []string{"workers=4", "output=/tmp/x", "threads=2"})
	if c2.Key(cells[5], in) != c.Key(cells[5], in) {
		t.Error("workers/output/threads changed a key")
	}
	if c.Key(cells[5], Inputs{Data: "d2", Embedding: "e"}) == c.Key(cells[5], in) {
		t.Error("the data checksum does not enter the key")
	}
	// Cells that privatize the training split alike share its corpus.
	train, both := cells[2], cells[2]
	both.Mode = "both"
	if c.CorpusKey(train, "train", in) != c.CorpusKey(both, "train", in) {
		t.Error("modes train and both do not share the privatized training split")
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, edit, want string
		sets             []string
	}{
		{"unknown key", "seeds: [1, 2]\nsedes: [3]\n", "x.yaml:13: field sedes not found", nil},
		{"wrong type", "seeds: [one]\n", "x.yaml:12:", nil},
		{"epsilon zero", "", "x.yaml:8: vickrey: ε = 0", []string{"mechanisms.0.epsilon=[0, 1]"}},
		{"t out of range", "", "x.yaml:10: vickrey: parameter t = 1.5", []string{"mechanisms.0.grid.t=[1.5]"}},
		{"bad mode", "", "x.yaml:11: apply \"sometimes\"", []string{"apply=[sometimes]"}},
		{"unknown dataset", "", "x.yaml:3: unknown dataset", []string{"dataset.name=books"}},
		{"bad set type", "", "after --set", []string{"train.epochs=many"}},
		{"bad set path", "", "--set seeds.x", []string{"seeds.x=1"}},
		{"dropout", "", "x.yaml: dropout 1.5", []string{"model.dropout=1.5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := good
			if c.edit != "" {
				text = strings.Replace(good, "seeds: [1, 2]\n", c.edit, 1)
			}
			_, err := Parse("x.yaml", []byte(text), c.sets)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}
