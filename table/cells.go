package table

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/results"
)

// A cellField is one column of cells.csv: its header and a record's
// value.
type cellField struct {
	name string
	val  func(c cellLine) string
}

// cellLine is a record as cells.csv reads it.
type cellLine struct {
	r      results.Record
	shares results.Shares
	diff   float64 // Δ against the baseline of its model point and seed
	stage  string  // the stage that ran it outside the plan
}

// csvNum is a number as the long tables print it: shortest form, empty
// for NaN.
func csvNum(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// score is a result of a successful record ("" for a failed one).
func (c cellLine) score(x float64) string {
	if c.r.Status != "ok" {
		return ""
	}
	return csvNum(x)
}

// cellFields are cells.csv's columns after the setting's parameters and
// the swept model parameters.
var cellFields = []cellField{
	{"notion", func(c cellLine) string { return string(c.r.Notion) }},
	{"mode", func(c cellLine) string { return c.r.Cell.Mode }},
	{"epsilon", func(c cellLine) string { return results.Epsilon(c.r.Cell.Mode, c.r.Cell.Epsilon) }},
	{"seed", func(c cellLine) string { return strconv.FormatUint(c.r.Cell.Seed, 10) }},
	{"status", func(c cellLine) string { return c.r.Status }},
	{"accuracy", func(c cellLine) string { return c.score(c.r.Test.Accuracy) }},
	{"macro_f1", func(c cellLine) string { return c.score(c.r.Test.MacroF1) }},
	{"accuracy_minus_baseline", func(c cellLine) string { return csvNum(c.diff) }},
	{"valid_accuracy", func(c cellLine) string { return c.score(c.r.Valid.Accuracy) }},
	{"best_epoch", func(c cellLine) string { return strconv.Itoa(c.r.BestEpoch) }},
	{"unchanged_in_vocab", func(c cellLine) string { return csvNum(c.shares.Unchanged) }},
	{"oov", func(c cellLine) string { return csvNum(c.shares.OOV) }},
	{"kept_stopwords", func(c cellLine) string { return csvNum(c.shares.Stopwords) }},
	{"unchanged_per_type", func(c cellLine) string { return csvNum(c.shares.TypeUnchanged) }},
	{"n_w", func(c cellLine) string { return csvNum(c.shares.Nw) }},
	{"s_w", func(c cellLine) string { return csvNum(c.shares.Sw) }},
	{"recovery", func(c cellLine) string { return csvNum(c.shares.Recovery) }},
	{"test_examples", func(c cellLine) string { return strconv.Itoa(c.r.Test.N) }},
	{"model", func(c cellLine) string { return c.r.Model }},
	{"model_reused", func(c cellLine) string { return strconv.FormatBool(c.r.Provenance.ModelReused) }},
	{"wall_seconds", func(c cellLine) string { return csvNum(c.r.Provenance.WallSeconds) }},
	{"stage", func(c cellLine) string { return c.stage }},
	{"key", func(c cellLine) string { return c.r.Key }},
	{"error", func(c cellLine) string { return c.r.Error }},
}

// WriteCells writes the long table: one CSV row per utility record, with
// the setting's parameters as columns (param_<name>), every metric, the
// paired difference to the baseline of the same seed, and the model the
// cell evaluated; rows in the summary's order, then by seed.
func WriteCells(w io.Writer, recs []results.Record, opt results.TableOptions) error {
	var mine []results.Record
	params, model := map[string]bool{}, map[string]bool{}
	for _, r := range recs {
		if r.Cell.Analysis != "" {
			continue
		}
		mine = append(mine, r)
		for k := range r.Cell.Params {
			params[k] = true
		}
		for k := range r.Cell.Model {
			model[k] = true
		}
	}
	diff := results.BaselineDiff(recs)
	order := func(r results.Record) int {
		if r.Cell.Mode == "none" {
			return -1
		}
		if i := slices.Index(opt.Order, r.Cell.Setting()); i >= 0 {
			return i
		}
		return len(opt.Order)
	}
	slices.SortStableFunc(mine, func(a, b results.Record) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), strings.Compare(a.Cell.Setting(), b.Cell.Setting()), cmp.Compare(results.ModeRank(a.Cell.Mode), results.ModeRank(b.Cell.Mode)),
			cmp.Compare(a.Cell.Epsilon, b.Cell.Epsilon), cmp.Compare(a.Cell.Seed, b.Cell.Seed))
	})
	names, swept := slices.Sorted(maps.Keys(params)), slices.Sorted(maps.Keys(model))
	head := []string{"setting", "mechanism"}
	for _, n := range names {
		head = append(head, "param_"+n)
	}
	for _, n := range swept {
		if s, ok := strings.CutPrefix(n, "train."); ok { // a swept training setting (experiments.Config.ModelGrid)
			head = append(head, "train_"+s)
		} else {
			head = append(head, "model_"+n)
		}
	}
	for _, f := range cellFields {
		head = append(head, f.name)
	}
	cw := csv.NewWriter(w)
	cw.Write(head)
	for _, r := range mine {
		row := []string{r.Cell.Setting(), r.Cell.Mechanism}
		for _, n := range names {
			v, ok := r.Cell.Params[n]
			if ok {
				row = append(row, fmt.Sprint(v))
			} else {
				row = append(row, "")
			}
		}
		for _, n := range swept {
			row = append(row, fmt.Sprint(r.Cell.Model[n]))
		}
		line := cellLine{r: r, shares: results.SharesOf(r), diff: diff(r), stage: opt.FromStage[r.Key]}
		for _, f := range cellFields {
			row = append(row, f.val(line))
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
