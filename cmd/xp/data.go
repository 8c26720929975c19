package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/datasets/catalog"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/runner"
)

const dataUsage = `usage: xp data <list|get|show> [flags]

  list [-sum]              every known dataset and embedding: present under the data root?, size, checksum
  get [-mirror DIR] NAME…  download (resumable, verified) or copy from a mirror folder into the data root
  show NAME|CONFIG.yaml    load a dataset (or the one a config names, as a run would: its
                           files, limits and carved splits) and print its splits, sizes,
                           tokens, the share without a vector, and label counts

flags common to all: -data DIR (default $XP_DATA)
`

func data(ctx context.Context, args []string, out io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(out, dataUsage)
		return errors.New("data: no subcommand")
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
		fmt.Fprint(out, dataUsage)
		return errHelp
	}
	fs := flag.NewFlagSet("data "+args[0], flag.ContinueOnError)
	root := fs.String("data", datasets.RootFromEnv(), "data root")
	sum := fs.Bool("sum", false, "list: compute sha256 and verify published checksums (reads every file)")
	mirror := fs.String("mirror", "", "get: copy from this folder instead of downloading")
	retries := fs.Int("retries", 3, "get: resume an interrupted download this many times")
	seed := fs.Uint64("seed", experiments.DefaultSplitSeed, "show: seed of the carved splits (a config's dataset.split_seed; the default is the configs' default)")
	if err := parseFlags(fs, args[1:], dataUsage, out); err != nil {
		return err
	}
	switch args[0] {
	case "list":
		return dataList(out, *root, *sum)
	case "get":
		if fs.NArg() == 0 {
			return errors.New("data get: name at least one artifact (see xp data list)")
		}
		var failed []string
		for _, name := range fs.Args() {
			a, err := catalog.Find(name)
			if err == nil {
				err = catalog.Fetch(ctx, a, *root, catalog.FetchOptions{Mirror: *mirror, Progress: stderr, Log: out, Retries: *retries})
			}
			if err != nil {
				fmt.Fprintln(stderr, "xp:", err)
				failed = append(failed, name)
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("data get: %d of %d failed: %v", len(failed), fs.NArg(), failed)
		}
		return nil
	case "show":
		if fs.NArg() != 1 {
			return errors.New("data show: name one dataset, or a config (CONFIG.yaml)")
		}
		if a := fs.Arg(0); strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml") {
			c, err := experiments.Load(a, experiments.Options{DataRoot: *root})
			if err != nil {
				return err
			}
			g, err := runner.Describe(ctx, c)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s: dataset %s\n\n", a, c.Dataset.Name)
			_, err = fmt.Fprint(out, g.Markdown())
			return err
		}
		d, err := datasets.Load(ctx, *root, fs.Arg(0), datasets.Options{Seed: *seed})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s (%s), labels %v\n", d.Name, d.Source, d.Labels)
		return writeRecords(out, d.Summary().Records())
	}
	fmt.Fprint(out, dataUsage)
	return fmt.Errorf("data: unknown subcommand %q", args[0])
}

func dataList(out io.Writer, root string, sum bool) error {
	if root == "" {
		fmt.Fprintf(out, "no data root: set %s or pass -data DIR; listing the catalog only\n", datasets.EnvRoot)
	} else {
		fmt.Fprintf(out, "data root %s\n", root)
	}
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSTATUS\tSIZE\tSHA256\tPATH")
	for _, s := range catalog.List(root, sum) {
		size, path, hash := "-", s.File.Path, "-"
		if s.Path != "" {
			size, path = human(s.Size), s.Path
		}
		if s.SHA256 != "" {
			hash = s.SHA256[:16] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Artifact.Name, s.Artifact.Kind, s.Check, size, hash, path)
	}
	return tw.Flush()
}

// writeRecords prints rows (the first is the header) as aligned columns.
func writeRecords(out io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	for _, r := range rows {
		for i, c := range r {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
