package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/torchrt"
)

// run executes one cell and returns its record (failed ones included);
// progress receives the privatization and epoch bars (nil: none).
func (s *Session) run(ctx context.Context, key string, cell experiments.Cell, prov results.Provenance, progress io.Writer) results.Record {
	start := time.Now()
	rec := results.Record{Key: key, Cell: cell, Notion: cell.Notion(), Status: "ok", Provenance: prov}
	rec.Provenance.Started = start.UTC().Format(time.RFC3339)
	if err := s.runInto(ctx, cell, &rec, progress); err != nil {
		rec.Status, rec.Error = "failed", oneLine(s.c.Output, key, err)
	}
	rec.Provenance.WallSeconds = time.Since(start).Seconds()
	rec.Provenance.PeakRSSBytes, _ = torchrt.PeakResidentBytes()
	return rec
}

// oneLine is a cell's error as its record keeps it: one line of at most
// maxErrorLine bytes. Where the error says more (a panic's stack trace,
// libtorch's backtrace and the Go stack where it was read:
// torchrt.Detail), the whole text goes to traces/<key>.txt in the output
// folder, which the line names.
func oneLine(out, key string, err error) string {
	msg := err.Error()
	first, _, multi := strings.Cut(msg, "\n")
	detail := torchrt.Detail(err)
	if !multi && len(msg) <= maxErrorLine && detail == "" {
		return msg
	}
	if len(first) > maxErrorLine {
		first = first[:maxErrorLine] + "…"
	}
	whole := msg + "\n"
	if detail != "" {
		whole += "\n" + detail
	}
	path := filepath.Join(out, "traces", key+".txt")
	if werr := os.MkdirAll(filepath.Dir(path), 0o755); werr != nil {
		return first
	}
	if werr := xio.WriteFileAtomic(path, []byte(whole)); werr != nil {
		return first
	}
	return first + " (the whole message: " + filepath.Join("traces", key+".txt") + ")"
}

// maxErrorLine is the longest error a record keeps.
const maxErrorLine = 500

func (s *Session) runInto(ctx context.Context, cell experiments.Cell, rec *results.Record, progress io.Writer) error {
	if cell.Analysis != "" {
		return s.an.analyze(ctx, cell, rec)
	}
	splits, err := s.privatized(ctx, cell, rec, progress)
	if err != nil {
		return err
	}
	if err := s.an.measure(ctx, cell, rec); err != nil {
		return err
	}
	m, t, reused, err := s.models.classifier(ctx, cell, splits, progress)
	if err != nil {
		return err
	}
	defer torchrt.Do(func() error { m.Close(); return nil })
	rec.Model, rec.Provenance.ModelReused = t.Key, reused
	rec.Valid, rec.BestEpoch, rec.Epochs, rec.Provenance.ExamplesPerSec = t.Valid, t.BestEpoch, t.Epochs, t.ExamplesPerSec
	rec.Coverage = map[string]results.Coverage{"train": t.Coverage["train"], "valid": t.Coverage["valid"]}
	var cov results.Coverage
	rec.Test, cov, err = s.models.evaluate(cell, m, t, splits["test"])
	rec.Coverage["test"] = cov
	return err
}

// privatized returns the cell's three splits and records their
// privatization reports, warnings and speed.
func (s *Session) privatized(ctx context.Context, cell experiments.Cell, rec *results.Record, progress io.Writer) (map[string]Split, error) {
	splits := map[string]Split{}
	var tokens int64
	var secs float64
	for _, name := range Splits {
		p, err := s.Split(ctx, cell, name, progress)
		if err != nil {
			return nil, err
		}
		splits[name] = p.Split
		if p.Report == nil {
			continue
		}
		if rec.Privacy == nil {
			rec.Privacy = map[string]metrics.Privatization{}
		}
		rec.Privacy[name] = *p.Report
		if p.Seconds > 0 {
			tokens += p.Report.Tokens
			secs += p.Seconds
		}
	}
	if secs > 0 {
		rec.Provenance.TokensPerSec = float64(tokens) / secs
	}
	rec.Flags = metrics.Flags(rec.Privacy, s.c.Checks.MaxOOV)
	return splits, nil
}
