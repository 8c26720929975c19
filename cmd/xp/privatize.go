package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/xp-nlp/xp/console"
	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/runner"
	"github.com/xp-nlp/xp/torchrt"
)

const privatizeUsage = `usage: xp privatize [flags] CONFIG.yaml

Writes, as TSV (id, label, original, privatized[, original2,
privatized2]), exactly the tokens one cell of the config trains or is
tested on beside the original tokens: the split privatized through the
same path, streams and cache as xp run (the whole split is privatized and
cached; --limit shortens only the output). --diff prints the examples with
each changed word marked instead, in colour on a terminal.`

// privatize writes one cell's split of a config.
func privatize(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("privatize", flag.ContinueOnError)
	var sets setFlags
	fs.Var(&sets, "set", "override a config key: path.to.key=value (repeatable)")
	data := fs.String("data", datasets.RootFromEnv(), "data root when the config has no data key (default $"+datasets.EnvRoot+")")
	setting := fs.String("setting", "", `the mechanism setting as tables name it, e.g. "vickrey t=0.5" (may be left out when the config has one)`)
	eps := fs.Float64("eps", 0, "ε of the cell (may be left out when the config has one)")
	seed := fs.Int64("seed", -1, "seed of the cell (default: the config's only seed)")
	split := fs.String("split", "test", "train, valid (carved from train) or test")
	limit := fs.Int("limit", 0, "write only the first N examples (0: all)")
	outPath := fs.String("o", "", "output TSV (default: stdout)")
	threads := fs.Int("threads", 0, "libtorch intra-op threads (0: the config's, or one per core)")
	diff := fs.Bool("diff", false, "print each example with its changed words marked (original→privatized; coloured on a terminal) instead of TSV")
	if err := parseFlags(fs, args, privatizeUsage, out); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("privatize: want one config file\n" + strings.SplitN(privatizeUsage, "\n", 2)[0])
	}
	c, err := experiments.Load(fs.Arg(0), experiments.Options{Set: sets, DataRoot: *data})
	if err != nil {
		return err
	}
	sel := experiments.Selector{Setting: *setting, Epsilon: *eps, Seed: uint64(max(*seed, 0)), AnySeed: *seed < 0, Role: "train"}
	if *split == "test" {
		sel.Role = "test"
	} else if *split != "train" && *split != "valid" {
		return fmt.Errorf("--split %q: want train, valid or test", *split)
	}
	cell, err := c.Select(sel)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	if err := torchrt.SetThreads(cmp.Or(*threads, c.Threads)); err != nil {
		return err
	}
	s, err := runner.Open(ctx, c, runner.SessionOptions{Log: stderr, Progress: stderr})
	if err != nil {
		return err
	}
	defer s.Close()
	p, err := s.Split(ctx, cell, *split, stderr)
	if err != nil {
		return err
	}
	switch {
	case *diff:
		if err := console.Diff(out, p, s.Labels(), *limit, progress.IsTerminal(out)); err != nil {
			return err
		}
	case *outPath != "":
		if err := xio.WriteFileAtomic(*outPath, console.SplitTSV(p, s.Labels(), *limit)); err != nil {
			return fmt.Errorf("privatize: %w", err)
		}
	default:
		if _, err := out.Write(console.SplitTSV(p, s.Labels(), *limit)); err != nil {
			return err
		}
	}
	r := p.Report
	fmt.Fprintf(stderr, "%s, split %s: %s ε=%g (%s): %d tokens, %d without a vector (kept), %d stopwords kept with no guarantee, %.1f%% of in-vocabulary tokens unchanged (%.1f%% drawn, %.1f%% kept stopwords); %d exact rescans\ncandidates: %s\n",
		cell, *split, r.Mechanism, r.Epsilon, r.Notion, r.Tokens, r.OOV, r.Stopwords, 100*r.UnchangedShare(), 100*(r.UnchangedShare()-r.KeptShare()), 100*r.KeptShare(), r.Fallbacks, r.Candidates)
	return nil
}
