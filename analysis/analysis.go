package analysis

import (
	"context"
	"fmt"
	"io"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// Env is what an analysis cell reads.
type Env struct {
	Space *mech.Space
	// Mech is the cell's mechanism (nil for analyses without ε); Source
	// names its random streams.
	Mech   mech.Mechanism
	Source mech.Source
	// Counts are the dataset's word frequencies (nil when the analysis
	// reads no dataset); Labels the lexicon's polarity of each word
	// (opinion lexicon only).
	Counts map[string]int64
	Labels map[string]int
	// Texts are the dataset's tokenized texts the analysis reads (its
	// training split; nil when it reads no dataset).
	Texts [][]string
	// Seed draws word samples.
	Seed uint64
	// Memo, when set, keeps words' sampled output counts between cells.
	Memo Memo
	// Shared are other mechanism settings that draw Mech's noise from
	// Source (the runner's common_noise: the other cells of its group),
	// each with its memo: a word's draws are searched once for all of
	// them (mech.SharedDraws) and their counts kept in their memos, where
	// their own cells find them.
	Shared   []Sharer
	Progress io.Writer
	// Device is where an analysis that trains a model (the
	// reconstruction attacker) trains it: the config's; the zero value
	// is the CPU.
	Device gotch.Device
}

// device is the device a model of the analysis trains on.
func (e Env) device() gotch.Device {
	if e.Device.Name == "" {
		return gotch.CPU
	}
	return e.Device
}

// Sharer is a mechanism setting that draws another's noise, and the memo
// of its counts (Env.Shared).
type Sharer struct {
	Mech mech.Mechanism
	Memo Memo
}

// Memo keeps the output counts of m draws of words under one mechanism
// setting, ε and seed — the runner's cache on disk, named by
// experiments.Config.DrawsKey. A word's draws depend only on those, the
// word and the draw's index (mech.WordSource), so counts kept by another
// cell or analysis are exactly those that drawing again would give.
type Memo interface {
	// Get returns the counts it holds of m draws of the words (absent
	// words are not in the map).
	Get(m int, words []string) (map[string]map[int32]int, error)
	// Put keeps counts of m draws.
	Put(m int, counts map[string]map[int32]int) error
}

// exact is implemented by mechanisms whose output distribution is known
// (mech.SanText, mech.CusText).
type exact interface {
	Distributions(ctx context.Context, rows []int, f func(w int, outs []int32, p []float64) error) error
}

// kind is one analysis as this package computes it, declared once in the
// analysis's own file: its computation from resolved parameters, and its
// plan — the rows and draws it will compute, picked with the functions
// the computation itself uses, for the dry run's estimates
// (TestPlanMatchesLookups holds plans to the lookups recorded).
type kind struct {
	name string
	run  func(ctx context.Context, v spec.Values, env Env) (metrics.Analysis, error)
	plan func(v spec.Values, env Env) (Work, error)
}

// kinds are the analyses this package computes, one per descriptor of
// spec (TestPackageDoc).
var kinds = []kind{neighboursKind, deniabilityKind, bayesKind, queryAttackKind, examplesKind, mappingKind, auditKind, reconstructionKind}

// kindOf is the named analysis's kind.
func kindOf(name string) (kind, bool) {
	for _, k := range kinds {
		if k.name == name {
			return k, true
		}
	}
	return kind{}, false
}

// Run computes the named analysis. Parameters are checked by the
// analysis's descriptor in spec.
func Run(ctx context.Context, name string, raw map[string]any, env Env) (metrics.Analysis, error) {
	d, v, err := spec.Resolve(spec.Analysis, name, 1, raw)
	if err != nil {
		return metrics.Analysis{}, err
	}
	k, ok := kindOf(name)
	if !ok {
		return metrics.Analysis{}, fmt.Errorf("analysis %s is described in spec but not computed by package analysis", name)
	}
	if d.Epsilon && env.Mech == nil {
		return metrics.Analysis{}, fmt.Errorf("analysis %s needs a mechanism", name)
	}
	if d.ReadsDataset(v) && env.Counts == nil {
		return metrics.Analysis{}, fmt.Errorf("analysis %s needs the dataset's word counts", name)
	}
	a, err := k.run(ctx, v, env)
	if err != nil {
		return a, fmt.Errorf("%s: %w", name, err)
	}
	return a, nil
}
