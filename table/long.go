package table

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/stats"
)

// A longField is one column of tables/long.csv: its header and its value
// on a line.
type longField struct {
	name string
	val  func(l longLine) string
}

// longLine is one line of long.csv: a record's statistic.
type longLine struct {
	r            results.Record
	kind, stat   string
	v, lo, hi    float64
	flags, stage string
}

var longFields = []longField{
	{"kind", func(l longLine) string { return l.kind }},
	{"setting", func(l longLine) string { return l.r.Cell.Setting() }},
	{"mechanism", func(l longLine) string { return l.r.Cell.Mechanism }},
	{"mode", func(l longLine) string { return l.r.Cell.Mode }},
	{"epsilon", func(l longLine) string {
		if l.r.Cell.Epsilon == 0 {
			return ""
		}
		return csvNum(l.r.Cell.Epsilon)
	}},
	{"seed", func(l longLine) string { return strconv.FormatUint(l.r.Cell.Seed, 10) }},
	{"statistic", func(l longLine) string { return l.stat }},
	{"value", func(l longLine) string { return csvNum(l.v) }},
	{"lo", func(l longLine) string { return csvNum(l.lo) }},
	{"hi", func(l longLine) string { return csvNum(l.hi) }},
	{"status", func(l longLine) string { return l.r.Status }},
	{"flags", func(l longLine) string { return l.flags }},
	{"key", func(l longLine) string { return l.r.Key }},
	{"stage", func(l longLine) string { return l.stage }},
	{"model", func(l longLine) string { return l.r.Cell.ModelPoint() }},
}

// LongHeader is the header of tables/long.csv.
var LongHeader = func() []string {
	var h []string
	for _, f := range longFields {
		h = append(h, f.name)
	}
	return h
}()

// WriteLong writes the run's tidy table: one row per record and statistic
// — a utility cell's accuracy, macro-F1, difference to its seed's baseline
// and privacy shares; an analysis cell's or a stage's every statistic
// with the interval its record gives (lo, hi; empty where none) — and one
// row for a failed record (statistic "", its status); flags are the
// record's (a search that missed its target, an attack no better than
// copying). kind is "utility", the analysis or the stage; stage names the
// stage that ran a utility cell at an ε of its finding (fromStage, by
// record key: matched-privacy's), model a cell's point of the config's
// model sweep. For reading in R, pandas or a
// spreadsheet: filter by kind and statistic, group by setting, mode and
// ε.
func WriteLong(w io.Writer, recs []results.Record, fromStage map[string]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(LongHeader); err != nil {
		return err
	}
	baseline := results.BaselineDiff(recs)
	for _, r := range recs {
		kind := r.Cell.Analysis
		if kind == "" {
			kind = "utility"
		}
		var flags []string
		if r.Analysis != nil {
			flags = r.Analysis.Flags
		}
		row := func(stat string, v, lo, hi float64) error {
			l := longLine{r: r, kind: kind, stat: stat, v: v, lo: lo, hi: hi, flags: strings.Join(flags, "; "), stage: fromStage[r.Key]}
			line := make([]string, len(longFields))
			for i, f := range longFields {
				line[i] = f.val(l)
			}
			return cw.Write(line)
		}
		nan := math.NaN()
		switch {
		case r.Status != "ok":
			if err := row("", nan, nan, nan); err != nil {
				return err
			}
		case r.Analysis != nil:
			heldOut := !math.IsNaN(r.Analysis.Stat("E_M held-out"))
			for _, s := range r.Analysis.Stats {
				lo, hi := nan, nan
				if s.Lo != s.Hi || s.Simulated || s.Quantized {
					lo, hi = float64(s.Lo), float64(s.Hi)
				}
				name := s.Name
				if heldOut && name == "E_M" { // the plug-in beside a held-out estimate (results.Honest)
					name = results.PlugIn
				}
				if err := row(name, float64(s.Value), lo, hi); err != nil {
					return err
				}
			}
		default:
			p := results.SharesOf(r)
			accLo, accHi := nan, nan // the test set's Wilson interval
			if r.Test.N > 0 {
				accLo, accHi = stats.Wilson(r.Test.Accuracy, r.Test.N)
			}
			for _, s := range []struct {
				name   string
				v      float64
				lo, hi float64
			}{{"accuracy", r.Test.Accuracy, accLo, accHi}, {"macro-F1", r.Test.MacroF1, nan, nan}, {"Δ accuracy", baseline(r), nan, nan}, {"unchanged", p.Unchanged, nan, nan},
				{"kept_unguarded", p.Stopwords, nan, nan}, {"oov", p.OOV, nan, nan}, {"N_w", p.Nw, nan, nan}, {"S_w", p.Sw, nan, nan}, {"recovery", p.Recovery, nan, nan}} {
				if math.IsNaN(s.v) {
					continue
				}
				if err := row(s.name, s.v, s.lo, s.hi); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteLongTable writes tables/long.csv under dir (see WriteLong).
func WriteLongTable(dir string, recs []results.Record, fromStage map[string]string) (string, error) {
	var b strings.Builder
	if err := WriteLong(&b, recs, fromStage); err != nil {
		return "", fmt.Errorf("table: long csv: %w", err)
	}
	p := filepath.Join(dir, "tables", "long.csv")
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return "", err
	}
	return p, xio.WriteFileAtomic(p, []byte(b.String()))
}
