package experiments

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/spec"
)

// Cell is one point of the sweep: a mechanism with one parameter setting
// and one ε, where it applies, and one seed. Mode "none" is the
// unprivatized baseline and has no mechanism. An analysis cell names its
// analysis and has no mode; an analysis that takes no ε has no mechanism.
type Cell struct {
	Analysis  string `json:"analysis,omitempty"`
	Mechanism string `json:"mechanism,omitempty"`
	// Params are the setting's parameters as the config gives them (fixed
	// and grid); Resolved completes them with the descriptor's defaults.
	Params  map[string]any `json:"params,omitempty"`
	Epsilon float64        `json:"epsilon,omitempty"`
	Mode    string         `json:"mode,omitempty"`
	Seed    uint64         `json:"seed"`
	// Model holds the cell's values of the model parameters the config
	// sweeps (see Config.ModelPoints); nil where none is swept.
	Model map[string]any `json:"model,omitempty"`
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

// Resolved is the cell's parameters completed with defaults (nil for the
// baseline). Cells of a validated config always resolve.
func (c Cell) Resolved() spec.Values {
	if c.Mechanism == "" {
		return nil
	}
	d, err := spec.Lookup(spec.Mechanism, c.Mechanism)
	if err != nil {
		return nil
	}
	v, _ := d.Resolve(c.Params)
	return v
}

// ReadsTask reports whether the cell's mechanism reads the task's word
// counts (SanText over the task's words, SanText+, CusText); an unknown
// mechanism is taken to read them.
func (c Cell) ReadsTask() bool {
	if c.Mechanism == "" {
		return false
	}
	d, err := spec.Lookup(spec.Mechanism, c.Mechanism)
	return err != nil || d.ReadsDataset(c.Resolved())
}

// Notion is the privacy guarantee of the cell's mechanism ("" for the baseline).
func (c Cell) Notion() spec.Notion {
	d, err := spec.Lookup(spec.Mechanism, c.Mechanism)
	if c.Mechanism == "" || err != nil {
		return ""
	}
	return d.NotionOf(c.Resolved())
}

// Setting names the mechanism and the parameters the config gives, e.g.
// "vickrey t=0.5" ("none" for the baseline): one line of a table or plot.
func (c Cell) Setting() string {
	if c.Mechanism == "" {
		return "none"
	}
	return join(c.Mechanism, c.Params)
}

func join(name string, p map[string]any) string {
	parts := []string{name}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, p[k]))
	}
	return strings.Join(parts, " ")
}

// String describes the cell in one line.
func (c Cell) String() string {
	switch {
	case c.Analysis != "" && c.Mechanism == "":
		return fmt.Sprintf("%s seed=%d", c.Analysis, c.Seed)
	case c.Analysis != "" && c.Epsilon == 0: // a stage's result over every ε of a setting
		return fmt.Sprintf("%s: %s seed=%d", c.Analysis, c.Setting(), c.Seed)
	case c.Analysis != "":
		return fmt.Sprintf("%s: %s ε=%s seed=%d", c.Analysis, c.Setting(), strconv.FormatFloat(c.Epsilon, 'g', -1, 64), c.Seed)
	case c.Mode == "none" && c.Model != nil:
		return fmt.Sprintf("baseline model %s seed=%d", c.ModelPoint(), c.Seed)
	case c.Mode == "none":
		return fmt.Sprintf("baseline seed=%d", c.Seed)
	case c.Model != nil:
		return fmt.Sprintf("%s ε=%s %s model %s seed=%d", c.Setting(), strconv.FormatFloat(c.Epsilon, 'g', -1, 64), c.Mode, c.ModelPoint(), c.Seed)
	}
	return fmt.Sprintf("%s ε=%s %s seed=%d", c.Setting(), strconv.FormatFloat(c.Epsilon, 'g', -1, 64), c.Mode, c.Seed)
}

// Stream is the name of the cell's mechanism setting for mech.Source: the
// random streams depend on it, the seed and the split, so that cells
// differing in any of them draw independent noise. It names the resolved
// parameters, so a parameter given at its default value draws the same
// noise as the parameter left out.
func (c Cell) Stream() string {
	return fmt.Sprintf("%s eps=%s", join(c.Mechanism, c.Resolved()), strconv.FormatFloat(c.Epsilon, 'g', -1, 64))
}

// SourceStream is the name of the cell's random streams (mech.Source's
// Cell): its Stream, except under common_noise for a mechanism that draws
// another's noise and only picks differently among the noisy vector's
// neighbours. Vickrey draws Laplace's noise, or with lambda the
// Mahalanobis mechanism's at that λ (mech's noisyNN.noise): its cells
// take that mechanism's stream at the same ε, so that they draw the same
// noise, and the same randomness after it, as its cells and each other
// do. Each cell's outputs keep their mechanism's distribution; their
// differences across settings have less spread (common random numbers),
// and an analysis draws once for all of them (mech.SharedDraws).
func (c *Config) SourceStream(cell Cell) string {
	if s := c.sharedStream(cell); s != "" {
		return s
	}
	return cell.Stream()
}

// noiseCell is the cell whose streams cell takes under common_noise (ok
// false where it keeps its own).
func (c *Config) noiseCell(cell Cell) (Cell, bool) {
	d, err := spec.Lookup(spec.Mechanism, cell.Mechanism)
	if !c.CommonNoise || err != nil || d.Noise == nil {
		return Cell{}, false
	}
	n := Cell{Mechanism: d.Noise.Mechanism, Epsilon: cell.Epsilon, Seed: cell.Seed}
	if v := cell.Resolved(); d.Noise.Param != "" && v.Has(d.Noise.Param) {
		n = Cell{Mechanism: d.Noise.WithParam, Params: map[string]any{d.Noise.Param: v.Float(d.Noise.Param)}, Epsilon: cell.Epsilon, Seed: cell.Seed}
	}
	return n, true
}

// sharedStream is SourceStream where it differs from the cell's Stream,
// else "": what keys add, so that keys of cells that keep their own
// streams are as they were.
func (c *Config) sharedStream(cell Cell) string {
	if n, ok := c.noiseCell(cell); ok {
		return n.Stream()
	}
	return ""
}

// Cells expands the config's grid: baseline cells (one per seed) when
// "none" is applied, then for each mechanism, each grid point (keys in
// sorted order, values in the config's order), each ε, each privatized
// mode in the config's order, each seed.
//
// An analysis config has one cell per mechanism, grid point, ε and seed,
// or one per seed for an analysis that takes no ε; its utility-loss
// stages add the utility cells they read (baseline and their apply
// modes) after them.
func (c *Config) Cells() []Cell {
	if c.IsAnalysis() {
		return append(c.analysisCells(), c.utilityCells(c.stageApply())...)
	}
	return c.utilityCells(c.Apply)
}

// stageApply is the apply modes of the utility cells the stages add
// (spec.Descriptor.Utility), with the baseline first (nil when no stage
// adds any; a stage that adds the baseline alone runs its utility cells
// at the ε it finds itself).
func (c *Config) stageApply() []string {
	var apply []string
	for i, st := range c.Stages {
		d, err := spec.Lookup(spec.Stage, st.Kind)
		if err != nil || d.Utility == "" {
			continue
		}
		if apply == nil {
			apply = []string{"none"}
		}
		if d.Utility != spec.UtilityApply {
			continue
		}
		for _, m := range c.StageParams(i).Strings("apply") {
			if !slices.Contains(apply, m) {
				apply = append(apply, m)
			}
		}
	}
	return apply
}

// HasUtilityCells reports whether the config has classifier cells: every
// utility config, and an analysis config with a utility-loss or
// matched-privacy stage.
func (c *Config) HasUtilityCells() bool { return !c.IsAnalysis() || c.stageApply() != nil }

// StageParams are stage i's parameters completed with defaults (nil when
// they do not resolve: validated configs always resolve).
func (c *Config) StageParams(i int) spec.Values {
	_, v, err := spec.Resolve(spec.Stage, c.Stages[i].Kind, 1, c.Stages[i].Params)
	if err != nil {
		return nil
	}
	return v
}

// utilityCells are the classifier cells for the apply modes.
func (c *Config) utilityCells(apply []string) []Cell {
	var out []Cell
	if len(apply) == 0 {
		return nil
	}
	for _, model := range c.ModelPoints() {
		if slices.Contains(apply, "none") {
			for _, s := range c.Seeds {
				out = append(out, Cell{Mode: "none", Seed: s, Model: model})
			}
		}
		for _, m := range c.Mechanisms {
			for _, point := range gridPoints(m) {
				for _, e := range m.Epsilon {
					for _, mode := range apply {
						if mode == "none" {
							continue
						}
						for _, s := range c.Seeds {
							out = append(out, Cell{Mechanism: m.Name, Params: point, Epsilon: e, Mode: mode, Seed: s, Model: model})
						}
					}
				}
			}
		}
	}
	return out
}

// gridPoints is the cartesian product of the grid's lists, each point
// merged with the fixed parameters (nil when there are none).
func gridPoints(m MechConfig) []map[string]any {
	points := []map[string]any{maps.Clone(m.Params)}
	if points[0] == nil {
		points[0] = map[string]any{}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Grid)) {
		list, _ := m.Grid[k].([]any)
		var next []map[string]any
		for _, p := range points {
			for _, v := range list {
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

func (c *Config) analysisCells() []Cell {
	a := c.Analysis.Kind
	var out []Cell
	if d, err := spec.Lookup(spec.Analysis, a); err == nil && !d.Epsilon {
		for _, s := range c.Seeds {
			out = append(out, Cell{Analysis: a, Seed: s})
		}
		return out
	}
	for _, m := range c.Mechanisms {
		for _, point := range gridPoints(m) {
			for _, e := range m.Epsilon {
				for _, s := range c.Seeds {
					out = append(out, Cell{Analysis: a, Mechanism: m.Name, Params: point, Epsilon: e, Seed: s})
				}
			}
		}
	}
	return out
}

// AnalysisParams are the config's analysis parameters completed with
// defaults (nil for a utility config). Validated configs always resolve.
func (c *Config) AnalysisParams() spec.Values {
	if !c.IsAnalysis() {
		return nil
	}
	_, v, err := spec.Resolve(spec.Analysis, c.Analysis.Kind, 1, c.Analysis.Params)
	if err != nil {
		return nil
	}
	return v
}

// ReadsDataset reports whether the config's cells read the dataset: every
// utility config does, and an analysis config with utility cells; an
// analysis does when it or one of its mechanisms does (SanText+ and
// CusText take the task's word counts).
func (c *Config) ReadsDataset() bool {
	return c.HasUtilityCells() || c.analysisReadsDataset()
}

// analysisReadsDataset reports whether the analysis cells read the
// dataset (their keys hold it only then).
func (c *Config) analysisReadsDataset() bool {
	if d, err := spec.Lookup(spec.Analysis, c.Analysis.Kind); err != nil || d.ReadsDataset(c.AnalysisParams()) {
		return true
	}
	return slices.ContainsFunc(c.analysisCells(), Cell.ReadsTask)
}
