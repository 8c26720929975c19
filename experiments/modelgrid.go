package experiments

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// A model parameter whose value in the config is a list is swept: every
// cell runs once per value (per combination, when several are lists),
// each with its own baseline, as mechanisms' grids expand. Cell.Model
// holds a cell's values of the swept parameters; nil where none is swept,
// so that the cells, keys and records of a config without a model sweep
// are what they were before sweeps existed.

// ModelGrid lists the swept model parameters, sorted by name, then the
// swept training settings, named train.<setting> and sorted, and their
// values.
func (c *Config) ModelGrid() (names []string, values [][]any) {
	for _, k := range slices.Sorted(maps.Keys(c.Model.Params)) {
		if list, ok := c.Model.Params[k].([]any); ok {
			names, values = append(names, k), append(values, list)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Train.Sweep)) {
		list := make([]any, len(c.Train.Sweep[k]))
		for i, v := range c.Train.Sweep[k] {
			list[i] = v
		}
		names, values = append(names, trainPrefix+k), append(values, list)
	}
	return names, values
}

// ModelPoints are the combinations of the swept model parameters' values
// (the cartesian product, in the lists' order, the first name varying
// slowest); one nil point where nothing is swept.
func (c *Config) ModelPoints() []map[string]any {
	names, values := c.ModelGrid()
	if len(names) == 0 {
		return []map[string]any{nil}
	}
	points := []map[string]any{{}}
	for i, n := range names {
		var next []map[string]any
		for _, p := range points {
			for _, v := range values[i] {
				q := maps.Clone(p)
				q[n] = v
				next = append(next, q)
			}
		}
		points = next
	}
	return points
}

// ModelParams are the model parameters a cell's classifier trains with:
// the config's, each swept one at the cell's value.
func (c *Config) ModelParams(cell Cell) map[string]any {
	if len(cell.Model) == 0 {
		return c.Model.Params
	}
	p := maps.Clone(c.Model.Params)
	for k, v := range cell.Model {
		if !strings.HasPrefix(k, trainPrefix) {
			p[k] = v
		}
	}
	return p
}

// ModelPoint names a cell's point of the model sweep ("dropout=0.3
// hidden=64"), "" where nothing is swept.
func (c Cell) ModelPoint() string {
	if len(c.Model) == 0 {
		return ""
	}
	return join("", c.Model)[1:]
}

// validateModelGrid checks the swept model parameters and training
// settings: utility runs only, never the checkpoint, each list non-empty,
// without repeats and of scalars.
func (c *Config) validateModelGrid() error {
	names, values := c.ModelGrid()
	for i, n := range names {
		path, key := []any{"model", n}, "model."+n
		if s, ok := strings.CutPrefix(n, trainPrefix); ok {
			path, key = []any{"train", s}, n
		}
		switch {
		case n == "checkpoint" || n == "kind":
			return c.errAt(fmt.Sprintf("model.%s takes one value, not a list: a sweep compares a model's parameters, not models", n), path...)
		case len(values[i]) == 0:
			return c.errAt(fmt.Sprintf("%s: an empty list sweeps nothing (give one value or several)", key), path...)
		case c.IsAnalysis() || len(c.Stages) > 0:
			return c.errAt(fmt.Sprintf("%s: model parameters and training settings are swept in utility runs only (this config has an analysis or stages)", key), path...)
		}
		for j, v := range values[i] {
			switch v.(type) {
			case []any, map[string]any:
				return c.errAt(fmt.Sprintf("%s: value %d is a list or map; a sweep lists single values", key, j+1), path...)
			}
			for _, w := range values[i][:j] {
				if fmt.Sprint(w) == fmt.Sprint(v) {
					return c.errAt(fmt.Sprintf("%s lists %v twice", key, v), path...)
				}
			}
		}
	}
	return nil
}

// UnmarshalYAML decodes the training settings, a list for any of them
// (its values in Sweep, its first in the field).
func (t *TrainConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain TrainConfig // the fields, without this method
	p := plain(*t)
	m := *deref(n)
	m.Content = slices.Clone(m.Content)
	for i := 0; i+1 < len(m.Content); i += 2 {
		v := deref(m.Content[i+1])
		if v.Kind != yaml.SequenceNode {
			continue
		}
		var list []int
		if err := v.Decode(&list); err != nil {
			return err
		}
		if p.Sweep == nil {
			p.Sweep = map[string][]int{}
		}
		p.Sweep[m.Content[i].Value] = list
		if len(list) == 0 { // validation refuses it by name; the field keeps its default
			m.Content = slices.Delete(m.Content, i, i+2)
			i -= 2
			continue
		}
		m.Content[i+1] = v.Content[0]
	}
	if err := m.Decode(&p); err != nil {
		return err
	}
	*t = TrainConfig(p)
	return nil
}

// MarshalYAML writes the training settings, a swept one as its list, so
// that a resolved config reads back to the same cells.
func (t TrainConfig) MarshalYAML() (any, error) {
	type plain TrainConfig
	var n yaml.Node
	if err := n.Encode(plain(t)); err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		list, ok := t.Sweep[n.Content[i].Value]
		if !ok {
			continue
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, v := range list {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)})
		}
		n.Content[i+1] = seq
	}
	return &n, nil
}

// trainPrefix marks a training setting among a sweep's names
// ("train.epochs"), beside the model's parameters ("hidden").
const trainPrefix = "train."

// settings are the training settings by their YAML names.
func (t *TrainConfig) settings() []struct {
	name string
	v    *int
} {
	return []struct {
		name string
		v    *int
	}{{"epochs", &t.Epochs}, {"batch", &t.Batch}, {"max_len", &t.MaxLen}, {"patience", &t.Patience}}
}

// TrainAt is the training loop a cell's classifier trains with: the
// config's, each swept setting at the cell's value.
func (c *Config) TrainAt(cell Cell) TrainConfig {
	t := c.Train
	t.Sweep = nil
	for _, s := range t.settings() {
		switch v := cell.Model[trainPrefix+s.name].(type) {
		case int:
			*s.v = v
		case float64: // read back from JSON
			*s.v = int(v)
		}
	}
	return t
}
