package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Version is mixed into every hash: bump it when a change to xp alters
// what a cell computes, so old records are not reused.
const Version = "xp-cell-1"

// Cell is one point of the sweep: a mechanism with one parameter setting
// and one ε, where it applies, and one seed. Mode "none" is the
// unprivatized baseline and has no mechanism.
type Cell struct {
	Mechanism string         `json:"mechanism,omitempty"`
	Params    map[string]any `json:"params,omitempty"`
	Epsilon   float64        `json:"epsilon,omitempty"`
	Mode      string         `json:"mode"`
	Seed      uint64         `json:"seed"`
}

// Privatizes reports whether the cell privatizes the given role: "train"
// (the training split and the validation split carved from it) or "test".
func (c Cell) Privatizes(role string) bool {
	switch role {
	case "train":
		return c.Mode == "train" || c.Mode == "both"
	case "test":
		return c.Mode == "test" || c.Mode == "both"
	}
	return false
}

// Setting names the mechanism and its parameters, e.g. "vickrey t=0.5"
// ("none" for the baseline): one line of a table or plot.
func (c Cell) Setting() string {
	if c.Mode == "none" {
		return "none"
	}
	parts := []string{c.Mechanism}
	for _, k := range slices.Sorted(maps.Keys(c.Params)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, c.Params[k]))
	}
	return strings.Join(parts, " ")
}

// String describes the cell in one line.
func (c Cell) String() string {
	if c.Mode == "none" {
		return fmt.Sprintf("baseline seed=%d", c.Seed)
	}
	return fmt.Sprintf("%s ε=%s %s seed=%d", c.Setting(), strconv.FormatFloat(c.Epsilon, 'g', -1, 64), c.Mode, c.Seed)
}

// Stream is the name of the cell's mechanism setting for mech.Source: the
// random streams depend on it, the seed and the split, so that cells
// differing in any of them draw independent noise.
func (c Cell) Stream() string {
	return fmt.Sprintf("%s eps=%s", c.Setting(), strconv.FormatFloat(c.Epsilon, 'g', -1, 64))
}

// Cells expands the config's grid: baseline cells (one per seed) when
// "none" is applied, then for each mechanism, each grid point (keys in
// sorted order, values in the config's order), each ε, each privatized
// mode in the config's order, each seed.
func (c *Config) Cells() []Cell {
	var out []Cell
	if slices.Contains(c.Apply, "none") {
		for _, s := range c.Seeds {
			out = append(out, Cell{Mode: "none", Seed: s})
		}
	}
	for _, m := range c.Mechanisms {
		for _, point := range gridPoints(m) {
			for _, e := range m.Epsilon {
				for _, mode := range c.Apply {
					if mode == "none" {
						continue
					}
					for _, s := range c.Seeds {
						out = append(out, Cell{Mechanism: m.Name, Params: point, Epsilon: e, Mode: mode, Seed: s})
					}
				}
			}
		}
	}
	return out
}

// gridPoints is the cartesian product of the grid's lists, each point
// merged with the fixed parameters.
func gridPoints(m MechConfig) []map[string]any {
	points := []map[string]any{maps.Clone(m.Params)}
	if points[0] == nil {
		points[0] = map[string]any{}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Grid)) {
		var next []map[string]any
		for _, p := range points {
			for _, v := range m.Grid[k].([]any) {
				q := maps.Clone(p)
				q[k] = v
				next = append(next, q)
			}
		}
		points = next
	}
	for i, p := range points {
		if len(p) == 0 {
			points[i] = nil
		}
	}
	return points
}

// Inputs are the checksums of what every cell reads: the loaded and
// subsampled splits, and the embedding (with its restriction).
type Inputs struct {
	Data      string `json:"data"`
	Embedding string `json:"embedding"`
}

// Key is the content hash naming the cell's result: everything that
// changes its numbers (the cell, the dataset, tokenizer, embedding, model
// and training settings, the device kind, the input checksums) and nothing
// else (output folder, workers, threads, progress).
func (c *Config) Key(cell Cell, in Inputs) string {
	return hash(map[string]any{
		"version": Version, "cell": cell, "dataset": c.Dataset, "tokenizer": c.Tokenizer,
		"embedding": c.Embedding, "model": c.Model, "train": c.Train, "device": deviceKind(c.Device), "inputs": in,
	})
}

// CorpusKey names a privatized split: the mechanism setting, ε, seed and
// split, over the same data, tokenizer and vectors. Cells that privatize
// the same split alike (modes train and both) share it.
func (c *Config) CorpusKey(cell Cell, split string, in Inputs) string {
	return hash(map[string]any{
		"version": Version, "mechanism": cell.Mechanism, "params": cell.Params, "epsilon": cell.Epsilon, "seed": cell.Seed,
		"split": split, "dataset": c.Dataset, "tokenizer": c.Tokenizer, "embedding": c.Embedding, "inputs": in,
		"device": deviceKind(c.Device),
	})
}

// deviceKind is cpu or cuda: the device's index does not change results.
func deviceKind(d string) string {
	if strings.HasPrefix(d, "cuda") {
		return "cuda"
	}
	return d
}

func hash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("experiments: hash of %T: %v", v, err)) // only plain data is hashed
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
