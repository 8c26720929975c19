package experiments

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestKeyInputs mutates every leaf of a config, one at a time, and
// requires the cell's key to change exactly for the keys that are not in
// Unkeyed: a key added to Config must be put in the key or declared
// unkeyed, or this test fails. The keys that choose cells (mechanisms,
// apply, seeds) are checked through the cell itself.
func TestKeyInputs(t *testing.T) {
	base := parse(t, good)
	cell := base.Cells()[2]
	in := Inputs{Data: "d", Embedding: "e"}
	want := base.Key(cell, in)
	var unchanged []string
	n := 0
	for _, leaf := range leaves(reflect.TypeOf(Config{}), nil) {
		top := leaf[0]
		if top == "mechanisms" || top == "apply" || top == "seeds" || top == "analysis" || top == "stages" {
			continue // they choose the cells (analysis: their kind; stages: the cells they add, and their own records)
		}
		c := base.Clone()
		mutate(t, reflect.ValueOf(c).Elem(), leaf)
		n++
		if c.Key(cell, in) == want {
			unchanged = append(unchanged, strings.Join(leaf, "."))
		}
	}
	var wantUnchanged []string
	for _, k := range Unkeyed {
		for _, leaf := range leaves(reflect.TypeOf(Config{}), nil) {
			if leaf[0] == k {
				wantUnchanged = append(wantUnchanged, strings.Join(leaf, "."))
			}
		}
	}
	slices.Sort(unchanged)
	slices.Sort(wantUnchanged)
	if !slices.Equal(unchanged, wantUnchanged) {
		t.Errorf("config leaves that leave the key unchanged: %v\nUnkeyed declares: %v", unchanged, wantUnchanged)
	}
	if n < 20 {
		t.Errorf("only %d leaves mutated", n)
	}
	// The cell's own coordinates and the input checksums are in the key.
	for name, other := range map[string]Cell{
		"epsilon": {Mechanism: cell.Mechanism, Params: cell.Params, Epsilon: 7, Mode: cell.Mode, Seed: cell.Seed},
		"params":  {Mechanism: cell.Mechanism, Params: map[string]any{"t": 0.9}, Epsilon: cell.Epsilon, Mode: cell.Mode, Seed: cell.Seed},
		"mode":    {Mechanism: cell.Mechanism, Params: cell.Params, Epsilon: cell.Epsilon, Mode: "both", Seed: cell.Seed},
		"seed":    {Mechanism: cell.Mechanism, Params: cell.Params, Epsilon: cell.Epsilon, Mode: cell.Mode, Seed: 9},
		"mech":    {Mechanism: "laplace", Epsilon: cell.Epsilon, Mode: cell.Mode, Seed: cell.Seed},
	} {
		if base.Key(other, in) == want {
			t.Errorf("changing the cell's %s leaves its key", name)
		}
	}
	for _, other := range []Inputs{{Data: "d2", Embedding: "e"}, {Data: "d", Embedding: "e2"}} {
		if base.Key(cell, other) == want {
			t.Errorf("inputs %+v leave the key", other)
		}
	}
	// The device's index is not a result input; its kind is.
	a, b := base.Clone(), base.Clone()
	a.Device, b.Device = "cuda:0", "cuda:1"
	if a.Key(cell, in) != b.Key(cell, in) {
		t.Error("cuda:0 and cuda:1 give different keys")
	}
}

// TestCorpusKeyInputs: a privatized split depends on the data, the
// tokenizer, the vectors and the cell's mechanism setting, never on the
// model or training.
func TestCorpusKeyInputs(t *testing.T) {
	base := parse(t, good)
	cell := base.Cells()[2]
	in := Inputs{Data: "d", Embedding: "e"}
	want := base.CorpusKey(cell, "train", in)
	for _, set := range []string{"model.hidden=64", "train.epochs=9", "model.kind=baseline", "checks.max_oov=0.5", "workers=3"} {
		c := parse(t, good, set)
		if c.CorpusKey(c.Cells()[2], "train", in) != want {
			t.Errorf("--set %s changed the privatized corpus key", set)
		}
	}
	for _, set := range []string{"dataset.train_limit=10", "tokenizer=whitespace", "embedding.top=100", "dataset.split_seed=5"} {
		c := parse(t, good, set)
		if c.CorpusKey(c.Cells()[2], "train", in) == want {
			t.Errorf("--set %s left the privatized corpus key", set)
		}
	}
	if base.CorpusKey(cell, "test", in) == want || base.CorpusKey(cell, "train", Inputs{Data: "x", Embedding: "e"}) == want {
		t.Error("split or data checksum left the corpus key")
	}
}

// leaves lists the YAML paths of every scalar, list or map of t.
func leaves(t reflect.Type, prefix []string) [][]string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out [][]string
	fields, inline := yamlFields(t)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		f := fields[name]
		path := append(slices.Clip(prefix), name)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			out = append(out, leaves(ft, path)...)
		} else {
			out = append(out, path)
		}
	}
	if inline != nil {
		out = append(out, append(slices.Clip(prefix), "*"))
	}
	return out
}

// mutate changes the value at path to another one of its type.
func mutate(t *testing.T, v reflect.Value, path []string) {
	for _, name := range path {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		fields, inline := yamlFields(v.Type())
		if name == "*" {
			v = v.FieldByIndex(inline.Index)
			v.Set(reflect.ValueOf(map[string]any{"hidden": 64}))
			return
		}
		v = v.FieldByIndex(fields[name].Index)
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 0.5)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	case reflect.Map:
		if path[0] == "privacy" { // resolved by its descriptor: an unknown name would leave no trace
			v.Set(reflect.ValueOf(map[string]any{"draws": 7}))
			return
		}
		v.Set(reflect.ValueOf(map[string]any{"x": 1}))
	default:
		t.Fatalf("mutate %s: kind %s", strings.Join(path, "."), v.Kind())
	}
}

func ExampleConfig_Key() {
	c, _ := Parse("x.yaml", []byte(good), Options{})
	cell := c.Cells()[2]
	fmt.Println(cell)
	fmt.Println(cell.Stream())
	// Output:
	// vickrey t=0.25 ε=1 train seed=1
	// vickrey exclude_input=false t=0.25 eps=1
}

// TestGroups: cells sharing a trained model (the baseline and test-mode
// cells of a seed) or a privatized training split (train and both of one
// setting, ε and seed) share a group; nothing else does; and a cell's
// group number does not depend on the order of the config's keys.
func TestGroups(t *testing.T) {
	in := Inputs{Data: "d", Embedding: "e"}
	groupsOf := func(c *Config) map[string]int {
		cells := c.Cells()
		keys := make([]string, len(cells))
		for i, cell := range cells {
			keys[i] = c.GroupKey(cell, in)
		}
		g, _ := Groups(keys)
		m := map[string]int{}
		for i, cell := range cells {
			m[cell.String()] = g[i]
		}
		return m
	}
	c := parse(t, good, "apply=[none, train, test, both]")
	m := groupsOf(c)
	// 2 seeds × (1 clean group + 2 t × 2 ε privatized training splits).
	if n := len(slices.Compact(slices.Sorted(maps.Values(m)))); n != 10 {
		t.Errorf("%d groups, want 10: %v", n, m)
	}
	for _, same := range [][2]string{
		{"baseline seed=1", "vickrey t=0.25 ε=5 test seed=1"},
		{"baseline seed=2", "vickrey t=0.75 ε=1 test seed=2"},
		{"vickrey t=0.25 ε=5 train seed=1", "vickrey t=0.25 ε=5 both seed=1"},
	} {
		if _, ok := m[same[1]]; !ok {
			t.Fatalf("no cell %q in %v", same[1], m)
		}
		if m[same[0]] != m[same[1]] {
			t.Errorf("%s and %s in groups %d and %d", same[0], same[1], m[same[0]], m[same[1]])
		}
	}
	for _, other := range [][2]string{
		{"baseline seed=1", "baseline seed=2"},
		{"baseline seed=1", "vickrey t=0.25 ε=5 train seed=1"},
		{"vickrey t=0.25 ε=5 train seed=1", "vickrey t=0.25 ε=5 train seed=2"},
		{"vickrey t=0.25 ε=5 train seed=1", "vickrey t=0.75 ε=5 train seed=1"},
		{"vickrey t=0.25 ε=5 train seed=1", "vickrey t=0.25 ε=1 train seed=1"},
	} {
		if m[other[0]] == m[other[1]] {
			t.Errorf("%s and %s share group %d", other[0], other[1], m[other[0]])
		}
	}
	// The same sweep with its keys in another order: the same groups.
	reordered := parse(t, `seeds: [2, 1]
apply: [both, test, train, none]
mechanisms:
  - grid:
      t: [0.75, 0.25]
    epsilon: [5, 1]
    name: vickrey
embedding:
  path: e.vec
dataset:
  name: sst2
name: t
`)
	if r := groupsOf(reordered); !maps.Equal(r, m) {
		t.Errorf("reordered config's groups:\n%v\nwant\n%v", r, m)
	}
}

// TestModelKey: the cells that evaluate one trained model share its key
// (the baseline and every test-mode cell of a seed; train and both of a
// setting, ε and seed), no other two do, and the model and training
// settings are in it while the evaluated split is not.
func TestModelKey(t *testing.T) {
	in := Inputs{Data: "d", Embedding: "e"}
	keys := func(c *Config) map[string]string {
		m := map[string]string{}
		for _, cell := range c.Cells() {
			m[cell.String()] = c.ModelKey(cell, in)
		}
		return m
	}
	c := parse(t, good, "apply=[none, train, test, both]")
	m := keys(c)
	distinct := slices.Compact(slices.Sorted(maps.Values(m)))
	// 2 seeds × (1 clean model + 2 t × 2 ε privatized training splits).
	if len(distinct) != 10 {
		t.Errorf("%d models, want 10", len(distinct))
	}
	for _, same := range [][2]string{
		{"baseline seed=1", "vickrey t=0.25 ε=5 test seed=1"},
		{"vickrey t=0.75 ε=1 test seed=1", "vickrey t=0.25 ε=5 test seed=1"},
		{"vickrey t=0.25 ε=5 train seed=1", "vickrey t=0.25 ε=5 both seed=1"},
	} {
		if m[same[0]] == "" || m[same[0]] != m[same[1]] {
			t.Errorf("%s and %s evaluate different models", same[0], same[1])
		}
	}
	for _, set := range []string{"model.hidden=7", "train.batch=17", "seeds=[1, 3]"} {
		if k := keys(parse(t, good, "apply=[none, train, test, both]", set)); k["baseline seed=1"] == m["baseline seed=1"] && set != "seeds=[1, 3]" {
			t.Errorf("%s: same model key", set)
		} else if set == "seeds=[1, 3]" && k["baseline seed=1"] != m["baseline seed=1"] {
			t.Errorf("%s: the seed-1 model's key changed with the other seeds", set)
		}
	}
}
