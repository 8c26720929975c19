package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/runner"
	"github.com/xp-nlp/xp/torchrt"
)

const privatizeUsage = `usage: xp privatize [flags] CONFIG.yaml

Writes, as TSV (id, label, text[, text2]), exactly the tokens one cell of
the config trains or is tested on: the split privatized through the same
path, streams and cache as xp run (the whole split is privatized and
cached; --limit shortens only the output).`

// privatize writes one cell's split of a config.
func privatize(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("privatize", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(fs.Output(), privatizeUsage); fs.PrintDefaults() }
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
	if err := parseFlags(fs, args, privatizeUsage, out); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("privatize: want one config file")
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
	s, err := runner.Open(ctx, c, runner.SessionOptions{Log: os.Stderr, Progress: os.Stderr})
	if err != nil {
		return err
	}
	defer s.Close()
	p, err := s.Split(ctx, cell, *split, os.Stderr)
	if err != nil {
		return err
	}
	if err := writeSplit(out, *outPath, p.Split, s.Labels(), *limit); err != nil {
		return err
	}
	r := p.Report
	fmt.Fprintf(os.Stderr, "%s, split %s: %s ε=%g (%s): %d tokens, %d without a vector (kept), %d stopwords kept, %.1f%% of in-vocabulary tokens unchanged; %d exact rescans\ncandidates: %s\n",
		cell, *split, r.Mechanism, r.Epsilon, r.Notion, r.Tokens, r.OOV, r.Stopwords, 100*r.UnchangedShare(), r.Fallbacks, r.Candidates)
	return nil
}

// writeSplit writes the split as TSV to path (atomically) or to out.
func writeSplit(out io.Writer, path string, sp runner.Split, labels []string, limit int) error {
	n := len(sp.Docs)
	if limit > 0 && limit < n {
		n = limit
	}
	var b strings.Builder
	b.WriteString("id\tlabel\ttext")
	if sp.Docs2 != nil {
		b.WriteString("\ttext2")
	}
	b.WriteByte('\n')
	for i := 0; i < n; i++ {
		label := "-"
		if l := sp.Labels[i]; l >= 0 && int(l) < len(labels) {
			label = labels[l]
		}
		fmt.Fprintf(&b, "%s\t%s\t%s", sp.IDs[i], label, strings.Join(sp.Docs[i], " "))
		if sp.Docs2 != nil {
			fmt.Fprintf(&b, "\t%s", strings.Join(sp.Docs2[i], " "))
		}
		b.WriteByte('\n')
	}
	if path != "" {
		if err := xio.WriteFileAtomic(path, []byte(b.String())); err != nil {
			return fmt.Errorf("privatize: %w", err)
		}
		return nil
	}
	w := bufio.NewWriter(out)
	if _, err := w.WriteString(b.String()); err != nil {
		return err
	}
	return w.Flush()
}
