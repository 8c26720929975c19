package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sugarme/gotch"
	"github.com/xp-nlp/xp/analysis"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
)

// An analyzer computes the analysis cells and the utility cells' opt-in
// privacy measures over the privatizer's candidates and mechanisms, with
// the draws cache under common noise.
type analyzer struct {
	c    *experiments.Config
	in   *inputs
	dev  gotch.Device
	priv *privatizer
	sums func(experiments.Cell) experiments.Inputs // what keys a cell (Session.sums)
	logf func(format string, args ...any)
}

// analyze computes an analysis cell: its mechanism (if it takes one)
// over the session's candidates, the dataset's word counts when read.
func (s *analyzer) analyze(ctx context.Context, cell experiments.Cell, rec *results.Record) error {
	env, built, err := s.analysisEnv(cell)
	if err != nil {
		return err
	}
	rec.Provenance.ConstructSeconds = built
	start := time.Now()
	a, err := analysis.Run(ctx, cell.Analysis, s.c.Analysis.Params, env)
	if err != nil {
		return err
	}
	if st := s.c.SourceStream(cell); st != cell.Stream() {
		a.Notes = append(a.Notes, fmt.Sprintf("common_noise: drawn from the streams of %s, whose cells draw the same noise", st))
	}
	if secs := time.Since(start).Seconds(); a.Lookups > 0 && secs > 0 {
		rec.Provenance.TokensPerSec = float64(a.Lookups) / secs
	}
	if w, err := analysis.Plan(cell.Analysis, s.c.Analysis.Params, env); err == nil {
		sampled := a.Method != "exact"
		rec.Provenance.WorkUnits = w.Units(sampled)
		if sampled && w.Draws > 1 {
			rec.Provenance.WorkUnits = a.Lookups // the draws the cache did not hold
		}
	}
	rec.Analysis = &a
	return nil
}

// analysisEnv is what an analysis at cell's coordinates reads: the
// session's candidates, the cell's mechanism (if any) and streams, the
// dataset's word counts and labels; built is the time spent building the
// mechanism's costly structure (see mechanism).
func (s *analyzer) analysisEnv(cell experiments.Cell) (env analysis.Env, built float64, err error) {
	space, err := s.priv.candidates()
	if err != nil {
		return analysis.Env{}, 0, err
	}
	in := s.in.view(cell)
	env = analysis.Env{Space: space, Seed: cell.Seed, Counts: in.counts, Labels: in.labels, Texts: in.splits["train"].Docs,
		Source: mech.Source{Seed: cell.Seed, Cell: s.c.SourceStream(cell)}, Device: s.dev}
	if cell.Mechanism != "" {
		if env.Mech, built, err = s.priv.mechanism(cell, nil); err != nil {
			return analysis.Env{}, 0, err
		}
		env.Memo = s.drawMemo(cell)
	}
	if cell.Analysis != "" && cell.Mechanism != "" && s.c.CommonNoise {
		for _, o := range s.sharers(cell) {
			m, b, err := s.priv.mechanism(o, nil)
			if err != nil {
				return analysis.Env{}, 0, err
			}
			built += b
			env.Shared = append(env.Shared, analysis.Sharer{Mech: m, Memo: s.drawMemo(o)})
		}
	}
	return env, built, nil
}

func (s *analyzer) drawMemo(cell experiments.Cell) *drawMemo {
	return &drawMemo{dir: filepath.Join(s.c.Cache, drawsDir), key: s.c.DrawsKey(cell, s.sums(cell)), logf: s.logf}
}

// sharers are the other mechanism settings of the config's analysis
// cells that draw cell's noise under common_noise (the same analysis,
// seed and streams: experiments.Config.SourceStream), once each, in plan
// order: cell's draws are drawn for them too, and their cells find
// them in the draws cache.
func (s *analyzer) sharers(cell experiments.Cell) []experiments.Cell {
	return groupOf(s.c, cell, func(o experiments.Cell) string { return drawGroup(s.c, o) }, experiments.Cell.Stream)
}

// measure computes the config's opt-in privacy measures of each split
// the cell privatizes (analysis.Split), over the split's original words,
// with the streams and draws cache of the cell's analysis environment.
func (s *analyzer) measure(ctx context.Context, cell experiments.Cell, rec *results.Record) error {
	if s.c.Privacy == nil || rec.Privacy == nil {
		return nil
	}
	env, _, err := s.analysisEnv(cell)
	if err != nil {
		return err
	}
	start := time.Now()
	for _, name := range Splits {
		if _, ok := rec.Privacy[name]; !ok {
			continue
		}
		env.Counts = s.in.splitCounts[name]
		a, err := analysis.Split(ctx, s.c.Privacy, env)
		if err != nil {
			return fmt.Errorf("privacy measures of %s: %w", name, err)
		}
		if rec.Measures == nil {
			rec.Measures = map[string]metrics.Analysis{}
		}
		rec.Measures[name] = a
	}
	rec.Provenance.MeasureSeconds = time.Since(start).Seconds()
	return nil
}

// attackTokens is the tokens of n of the analysis's texts, each cut to
// maxLen, at their mean length: what one privatization of the
// reconstruction attack's texts costs.
func (s *analyzer) attackTokens(cell experiments.Cell, n, maxLen int) int64 {
	docs := s.in.view(cell).splits["train"].Docs
	var total int64
	for _, d := range docs {
		total += int64(min(len(d), maxLen))
	}
	if len(docs) == 0 {
		return 0
	}
	return total * int64(n) / int64(len(docs))
}
