package results

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
	"github.com/xp-nlp/xp/stats"
)

// LongHeader is the header of tables/long.csv.
var LongHeader = []string{"kind", "setting", "mechanism", "mode", "epsilon", "seed", "statistic", "value", "lo", "hi", "status", "flags", "key", "stage", "model"}

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
func WriteLong(w io.Writer, recs []Record, fromStage map[string]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(LongHeader); err != nil {
		return err
	}
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	baseline := map[modelSeed]float64{}
	for _, r := range recs {
		if r.Cell.Analysis == "" && r.Cell.Mode == "none" && r.Status == "ok" {
			baseline[modelSeed{r.Cell.ModelPoint(), r.Cell.Seed}] = r.Test.Accuracy
		}
	}
	for _, r := range recs {
		kind := r.Cell.Analysis
		if kind == "" {
			kind = "utility"
		}
		eps := ""
		if r.Cell.Epsilon != 0 {
			eps = f(r.Cell.Epsilon)
		}
		var flags []string
		if r.Analysis != nil {
			flags = r.Analysis.Flags
		}
		row := func(stat string, v, lo, hi float64) error {
			return cw.Write([]string{kind, r.Cell.Setting(), r.Cell.Mechanism, r.Cell.Mode, eps, strconv.FormatUint(r.Cell.Seed, 10), stat, f(v), f(lo), f(hi), r.Status, strings.Join(flags, "; "), r.Key, fromStage[r.Key], r.Cell.ModelPoint()})
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
					name = PlugIn
				}
				if err := row(name, float64(s.Value), lo, hi); err != nil {
					return err
				}
			}
		default:
			p := privacyOf(r)
			diff := nan
			if b, ok := baseline[modelSeed{r.Cell.ModelPoint(), r.Cell.Seed}]; ok && r.Cell.Mode != "none" {
				diff = r.Test.Accuracy - b
			}
			accLo, accHi := nan, nan // the test set's Wilson interval
			if r.Test.N > 0 {
				accLo, accHi = stats.Wilson(r.Test.Accuracy, r.Test.N)
			}
			for _, s := range []struct {
				name   string
				v      float64
				lo, hi float64
			}{{"accuracy", r.Test.Accuracy, accLo, accHi}, {"macro-F1", r.Test.MacroF1, nan, nan}, {"Δ accuracy", diff, nan, nan}, {"unchanged", p.unchanged, nan, nan},
				{"kept_unguarded", p.stopwords, nan, nan}, {"oov", p.oov, nan, nan}, {"N_w", p.nw, nan, nan}, {"S_w", p.sw, nan, nan}, {"recovery", p.recovery, nan, nan}} {
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
func WriteLongTable(dir string, recs []Record, fromStage map[string]string) (string, error) {
	var b strings.Builder
	if err := WriteLong(&b, recs, fromStage); err != nil {
		return "", fmt.Errorf("results: long csv: %w", err)
	}
	p := filepath.Join(dir, "tables", "long.csv")
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return "", err
	}
	return p, xio.WriteFileAtomic(p, []byte(b.String()))
}
