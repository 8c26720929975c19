package experiments

import (
	"fmt"
	"maps"
	"slices"
)

// A model parameter whose value in the config is a list is swept: every
// cell runs once per value (per combination, when several are lists),
// each with its own baseline, as mechanisms' grids expand. Cell.Model
// holds a cell's values of the swept parameters; nil where none is swept,
// so that the cells, keys and records of a config without a model sweep
// are what they were before sweeps existed.

// ModelGrid lists the swept model parameters, sorted by name, and their
// values.
func (c *Config) ModelGrid() (names []string, values [][]any) {
	for _, k := range slices.Sorted(maps.Keys(c.Model.Params)) {
		if list, ok := c.Model.Params[k].([]any); ok {
			names, values = append(names, k), append(values, list)
		}
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
	maps.Copy(p, cell.Model)
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

// validateModelGrid checks the swept model parameters: utility runs only,
// never the checkpoint, each list non-empty, without repeats and of
// scalars.
func (c *Config) validateModelGrid() error {
	names, values := c.ModelGrid()
	for i, n := range names {
		switch {
		case n == "checkpoint" || n == "kind":
			return c.errAt(fmt.Sprintf("model.%s takes one value, not a list: a sweep compares a model's parameters, not models", n), "model", n)
		case len(values[i]) == 0:
			return c.errAt(fmt.Sprintf("model.%s: an empty list sweeps nothing (give one value or several)", n), "model", n)
		case c.IsAnalysis() || len(c.Stages) > 0:
			return c.errAt(fmt.Sprintf("model.%s: model parameters are swept in utility runs only (this config has an analysis or stages)", n), "model", n)
		}
		for j, v := range values[i] {
			switch v.(type) {
			case []any, map[string]any:
				return c.errAt(fmt.Sprintf("model.%s: value %d is a list or map; a sweep lists single values", n, j+1), "model", n)
			}
			for _, w := range values[i][:j] {
				if fmt.Sprint(w) == fmt.Sprint(v) {
					return c.errAt(fmt.Sprintf("model.%s lists %v twice", n, v), "model", n)
				}
			}
		}
	}
	return nil
}
