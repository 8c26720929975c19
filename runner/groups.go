package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/xp-nlp/xp/experiments"
)

// The groups of cells that draw one noise under common_noise, and the
// cells' files, as the config alone decides them.

// drawGroup names the analysis cells that draw together under
// common_noise: one analysis, seed and streams (experiments.Config.
// SourceStream); "" for a cell that draws alone.
func drawGroup(c *experiments.Config, cell experiments.Cell) string {
	if !c.CommonNoise || cell.Analysis == "" || cell.Mechanism == "" {
		return ""
	}
	return fmt.Sprintf("%s\x00%s\x00%d", cell.Analysis, c.SourceStream(cell), cell.Seed)
}

// groupOf is the config's other cells in plan order whose group is
// cell's (not ""), one per id, none with cell's own id.
func groupOf(c *experiments.Config, cell experiments.Cell, group, id func(experiments.Cell) string) []experiments.Cell {
	g := group(cell)
	if g == "" {
		return nil
	}
	seen := map[string]bool{id(cell): true}
	var out []experiments.Cell
	for _, o := range c.Cells() {
		if group(o) != g || seen[id(o)] {
			continue
		}
		seen[id(o)] = true
		out = append(out, o)
	}
	return out
}

// splitGroup names the privatized splits made together under
// common_noise (splitSharers): one split, seed and streams; "" where
// the option is off or the cell does not privatize split.
func splitGroup(c *experiments.Config, cell experiments.Cell, split string) string {
	if !c.CommonNoise || cell.Mechanism == "" || cell.Analysis != "" || !cell.Privatizes(role(split)) {
		return ""
	}
	return fmt.Sprintf("split\x00%s\x00%s\x00%d", split, c.SourceStream(cell), cell.Seed)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
