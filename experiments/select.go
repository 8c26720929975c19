package experiments

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Selector picks the cell whose split a user wants to see: a setting as
// tables name it ("vickrey t=0.5"), ε, seed, and the role of the split
// ("train": the training and validation splits, "test"). Empty or zero
// fields match any value, when only one is possible.
type Selector struct {
	Setting string
	Epsilon float64 // 0: any
	Seed    uint64
	AnySeed bool // Seed is unset
	Role    string
}

// Select returns the cell the selector names that privatizes the role:
// the cell of mode Role, or of mode both when the config has no such
// cell (train and both share the privatized training split, test and
// both the privatized test split). The error lists what there is to
// choose from when the selector matches no cell, or several settings, ε
// or seeds.
func (c *Config) Select(sel Selector) (Cell, error) {
	var match []Cell
	settings, eps, seeds := map[string]bool{}, map[float64]bool{}, map[uint64]bool{}
	for _, cell := range c.Cells() {
		if !cell.Privatizes(sel.Role) {
			continue
		}
		settings[cell.Setting()], eps[cell.Epsilon], seeds[cell.Seed] = true, true, true
		if (sel.Setting == "" || cell.Setting() == sel.Setting) && (sel.Epsilon == 0 || cell.Epsilon == sel.Epsilon) && (sel.AnySeed || cell.Seed == sel.Seed) {
			match = append(match, cell)
		}
	}
	if len(settings) == 0 {
		return Cell{}, fmt.Errorf("no cell of %s privatizes the %s split (apply: %s)", c.file, sel.Role, strings.Join(c.Apply, ", "))
	}
	choices := fmt.Sprintf("settings %s; ε %s; seeds %s", list(settings, strconv.Quote), list(eps, func(e float64) string { return strconv.FormatFloat(e, 'g', -1, 64) }),
		list(seeds, func(s uint64) string { return strconv.FormatUint(s, 10) }))
	if len(match) == 0 {
		return Cell{}, fmt.Errorf("no cell matches (the cells that privatize %s have %s)", sel.Role, choices)
	}
	first := match[0]
	for _, m := range match[1:] {
		if m.Setting() != first.Setting() || m.Epsilon != first.Epsilon || m.Seed != first.Seed {
			return Cell{}, fmt.Errorf("several cells match: choose among %s", choices)
		}
	}
	for _, m := range match {
		if m.Mode == sel.Role {
			return m, nil
		}
	}
	return first, nil
}

func list[K comparable](m map[K]bool, show func(K) string) string {
	var s []string
	for k := range m {
		s = append(s, show(k))
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}
