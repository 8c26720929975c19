package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/datasets/embedding"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/torchrt"
)

// privatize writes a privatized copy of one dataset split (TSV: id, label,
// privatized text) so users can read what a mechanism does.
func privatize(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("privatize", flag.ContinueOnError)
	root := fs.String("data", datasets.RootFromEnv(), "data root")
	dataset := fs.String("dataset", "sst2", "dataset name (xp data list)")
	split := fs.String("split", "dev", "split to privatize")
	emb := fs.String("embedding", "embeddings/fasttext-sg-xpcorpus-300d.vec.gz", "embedding file (relative to the data root or absolute)")
	cache := fs.String("cache", "runs/cache", "cache folder for embeddings and precomputed mechanism structures (empty: none)")
	name := fs.String("mech", "laplace", "mechanism: "+strings.Join(mech.Names(), ", "))
	eps := fs.Float64("eps", 10, "ε")
	var params paramFlags
	fs.Var(&params, "p", "mechanism parameter key=value (repeatable), e.g. -p t=0.5")
	seed := fs.Uint64("seed", 1, "run seed")
	limit := fs.Int("limit", 0, "privatize only the first N examples (0: all)")
	device := fs.String("device", "cpu", "cpu, cuda, cuda:N or auto")
	threads := fs.Int("threads", 0, "libtorch intra-op threads (0: one per core)")
	outPath := fs.String("o", "", "output TSV (default: stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := torchrt.SetThreads(*threads); err != nil {
		return err
	}
	dev, err := torchrt.ParseDevice(*device)
	if err != nil {
		return err
	}
	d, err := datasets.Load(ctx, *root, *dataset, datasets.Options{Seed: *seed})
	if err != nil {
		return err
	}
	ex, err := d.Split(*split)
	if err != nil {
		return err
	}
	if *limit > 0 && *limit < len(ex) {
		ex = ex[:*limit]
	}
	path := *emb
	if !strings.HasPrefix(path, "/") && *root != "" {
		path = *root + "/" + path
	}
	embCache, mechCache := "", ""
	if *cache != "" {
		embCache, mechCache = filepath.Join(*cache, "embeddings"), filepath.Join(*cache, "mech")
	}
	e, err := embedding.Load(ctx, path, embedding.Options{CacheDir: embCache, Progress: os.Stderr, Log: os.Stderr})
	if err != nil {
		return err
	}
	space, err := mech.NewSpace(e, dev, 0)
	if err != nil {
		return err
	}
	defer space.Close()
	space.CacheDir = mechCache
	tok := datasets.DefaultTokenizer()
	docs := make([][]string, 0, len(ex))
	counts := map[string]int64{}
	for _, x := range ex {
		t := tok.Tokens(x.Text)
		for _, w := range t {
			counts[w]++
		}
		docs = append(docs, t)
	}
	m, err := mech.New(*name, space, *eps, mech.Params(params), mech.Options{Counts: counts, Progress: os.Stderr})
	if err != nil {
		return err
	}
	start := time.Now()
	priv, rep, err := m.Privatize(ctx, docs, mech.Source{Seed: *seed, Cell: m.Name() + " eps=" + strconv.FormatFloat(*eps, 'g', -1, 64), Split: *dataset + "/" + *split})
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	w := out
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "id\tlabel\ttext\n")
	for i, x := range ex {
		label := "-"
		if x.Label >= 0 {
			label = d.Labels[x.Label]
		}
		fmt.Fprintf(bw, "%s\t%s\t%s\n", x.ID, label, strings.Join(priv[i], " "))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s ε=%g (%s): %d tokens (%d OOV kept), %.1f%% unchanged, %.0f tokens/s, %d exact rescans\ncandidates: %s\n",
		rep.Mechanism, rep.Epsilon, rep.Notion, rep.Tokens, rep.OOV, 100*rep.OriginalProportion(), float64(rep.Tokens)/secs, rep.Fallbacks, rep.Candidates)
	return nil
}

// paramFlags collects -p key=value; values are parsed as bool, int,
// float or a comma list of floats in brackets.
type paramFlags map[string]any

func (p *paramFlags) String() string { return fmt.Sprint(map[string]any(*p)) }

func (p *paramFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want key=value")
	}
	if *p == nil {
		*p = paramFlags{}
	}
	switch {
	case v == "true" || v == "false":
		(*p)[k] = v == "true"
	case strings.HasPrefix(v, "["):
		var list []any
		for _, f := range strings.Split(strings.Trim(v, "[]"), ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			list = append(list, x)
		}
		(*p)[k] = list
	default:
		if i, err := strconv.Atoi(v); err == nil {
			(*p)[k] = i
		} else if f, err := strconv.ParseFloat(v, 64); err == nil {
			(*p)[k] = f
		} else {
			return fmt.Errorf("%s: %q is not a number or bool", k, v)
		}
	}
	return nil
}
