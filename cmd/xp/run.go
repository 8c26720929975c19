package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/xp-nlp/xp/console"
	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/report"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/runner"
	"github.com/xp-nlp/xp/table"
)

// failedCells is returned when a sweep finished with failed or missing
// cells; the process exits with their number (at most 125).
type failedCells struct {
	n, of   int
	missing int // of n: without a record
	out     string
}

func (f failedCells) Error() string {
	switch {
	case f.missing == 0:
		return fmt.Sprintf("%d of %d cells failed (their errors: xp status %s)", f.n, f.of, f.out)
	case f.missing == f.n:
		return fmt.Sprintf("%d of %d cells have no record yet (xp status %s; run again to run them)", f.n, f.of, f.out)
	}
	return fmt.Sprintf("%d of %d cells failed or have no record: %d failed (their errors: xp status %s), %d without a record (run again to run them)",
		f.n, f.of, f.n-f.missing, f.out, f.missing)
}

type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

const runUsage = "usage: xp run [--set k=v]... [--dry-run] [--workers N] [--shard I/N] [--prepare|--merge] CONFIG.yaml"

func runCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var sets setFlags
	fs.Var(&sets, "set", "override a config key: path.to.key=value (repeatable), e.g. --set train.epochs=1")
	data := fs.String("data", datasets.RootFromEnv(), "data root when the config has no data key (default $"+datasets.EnvRoot+")")
	dry := fs.Bool("dry-run", false, "list the cells and what is cached; run nothing")
	workers := fs.Int("workers", 0, "worker processes over cells (0: the config's workers)")
	threads := fs.Int("threads", 0, "libtorch threads of this process (0: the config's threads)")
	shard := fs.String("shard", "", "run only shard I of N (I/N) of the sweep's groups, e.g. one per node or GPU over a shared output folder")
	prep := fs.Bool("prepare", false, "build what the shards share (caches), write the run's config and plan, run no cell")
	merge := fs.Bool("merge", false, "run no cell: run the stages and write tables and plots from the records there")
	quiet := fs.Bool("q", false, "no progress bars")
	if err := parseFlags(fs, args, runUsage, out); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(runUsage)
	}
	if *workers < 0 || *threads < 0 {
		return fmt.Errorf("--workers %d, --threads %d: want ≥ 0 (0: the config's)", *workers, *threads)
	}
	c, err := experiments.Load(fs.Arg(0), experiments.Options{Set: sets, DataRoot: *data})
	if err != nil {
		return err
	}
	opt := runner.Options{Threads: *threads, DryRun: *dry, Prepare: *prep, Merge: *merge,
		Worker: os.Getenv(runner.WorkerEnv) == "1", Log: stderr, Progress: stderr}
	if *quiet {
		opt.Progress = nil
	}
	if *shard != "" {
		i, n, ok := strings.Cut(*shard, "/")
		a, err1 := strconv.Atoi(i)
		b, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || b < 1 || a < 0 || a >= b {
			return fmt.Errorf("--shard %q: want I/N with 0 ≤ I < N", *shard)
		}
		opt.Shard, opt.Shards = a, b
	}
	if *workers == 0 {
		*workers = c.Workers
	}
	if exe, err := os.Executable(); err == nil && *workers > 1 && opt.Shards == 0 {
		opt.Launcher = runner.Local{Workers: *workers, Command: shardCommand(exe), Progress: opt.Progress, Log: stderr}
	}
	if *dry {
		opt.Startup = startup() // read from /proc only where it is used
	}
	j, err := runner.Start(ctx, c, opt)
	if err != nil {
		return err
	}
	defer j.Close()
	switch {
	case *dry:
		j.Estimate(ctx)
		console.DryRun(out, c, opt, j.Summary())
		return nil
	case *prep:
		if err := j.Prepare(ctx); err != nil {
			return err
		}
		sum := j.Summary()
		fmt.Fprintf(out, "prepared %s: %d cells in %d groups, %d cached\n", c.Output, len(sum.Cells), sum.Groups, sum.Reused)
		return nil
	case !*merge:
		if err := j.Execute(ctx); err != nil {
			return err
		}
	}
	if err := j.Merge(ctx); err != nil {
		return err
	}
	sum := j.Summary()
	if opt.Shards == 0 {
		console.Finished(out, c, sum)
		page, err := writeReport([]string{c.Output}, filepath.Join(c.Output, "report.html"), report.Options{}, "")
		if err != nil {
			return fmt.Errorf("the run's records are whole; its page failed: %w", err)
		}
		fmt.Fprintln(out, "wrote", page, "(open it in a browser: the run as one page)")
	}
	if n := sum.Failed + sum.Missing; n > 0 {
		return failedCells{n: n, of: len(sum.Cells), missing: sum.Missing, out: c.Output}
	}
	return nil
}

// shardCommand is the command of one shard: this binary, quiet, on the
// resolved config.
func shardCommand(exe string) func(ctx context.Context, config string, shard, shards, threads int) *exec.Cmd {
	return func(ctx context.Context, config string, shard, shards, threads int) *exec.Cmd {
		return exec.CommandContext(ctx, exe, "run", "-q", "--shard", fmt.Sprintf("%d/%d", shard, shards), "--threads", strconv.Itoa(threads), config)
	}
}

// resultsCmd prints the tables of the run in OUTDIR, or compares the
// utility tables of several runs side by side.
func resultsCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("results", flag.ContinueOnError)
	csv := fs.Bool("csv", false, "CSV instead of Markdown (the utility table)")
	into := fs.String("into", "", "rewrite the <!-- xp:results RUN --> … <!-- /xp:results --> blocks of this Markdown file from the runs' records")
	compare := fs.Bool("compare", false, "test lines of one run's table against each other: xp results --compare OUTDIR 'LINE A' 'LINE B'…, a line named by its mechanism, mode and ε ('laplace test 10') or none")
	latex := fs.Bool("latex", false, "LaTeX (booktabs) instead of Markdown, for any of the tables")
	const usage = "usage: xp results [--csv|--latex] OUTDIR, xp results [--latex] OUTDIR_A OUTDIR_B... (side by side), xp results [--latex] --compare OUTDIR 'LINE A' 'LINE B'... (paired tests), or xp results --into FILE.md"
	if err := parseFlags(fs, args, usage, out); err != nil {
		return err
	}
	if *latex && (*csv || *into != "") {
		return errors.New("xp results --latex prints a table: not with --csv or --into")
	}
	grid := func(g table.Grid) string {
		if *latex {
			return g.LaTeX()
		}
		return g.Markdown()
	}
	if *compare {
		if fs.NArg() < 3 || *csv || *into != "" {
			return errors.New("usage: xp results --compare OUTDIR 'LINE A' 'LINE B'... (lines named as the table prints them: mechanism, mode, ε, e.g. 'laplace test 10', or none)")
		}
		st, rows, _, err := rundir.ReadTables(fs.Arg(0))
		if err != nil {
			return err
		}
		report.Incomplete(stderr, st)
		g, err := table.PairedGrid(rows, fs.Args()[1:])
		if err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
		_, err = fmt.Fprint(out, grid(g))
		return err
	}
	if *into != "" {
		if fs.NArg() > 0 {
			return errors.New("xp results --into FILE takes no run folder: the file's blocks name theirs")
		}
		return intoFile(*into, out)
	}
	if fs.NArg() == 0 {
		return errors.New(usage)
	}
	if fs.NArg() > 1 {
		if *csv {
			return errors.New("xp results --csv takes one run folder (each has tables/results.csv and the per-seed tables/cells.csv)")
		}
		var tables [][]results.Row
		for _, dir := range fs.Args() {
			st, rows, _, err := rundir.ReadTables(dir)
			if err != nil {
				return err
			}
			report.Incomplete(stderr, st)
			if rows == nil {
				return fmt.Errorf("%s: no utility table to compare (an analysis run)", dir)
			}
			tables = append(tables, rows)
		}
		_, err := fmt.Fprint(out, grid(table.CompareGrid(fs.Args(), tables)))
		return err
	}
	st, rows, stats, err := rundir.ReadTables(fs.Arg(0))
	if err != nil {
		return err
	}
	report.Incomplete(stderr, st)
	if *csv {
		if rows == nil {
			return errors.New("xp results --csv: an analysis run's CSV is tables/analysis.csv in its folder")
		}
		return table.WriteCSV(out, rows)
	}
	if *latex { // the files tables/analysis.tex and results.tex hold
		var b strings.Builder
		if len(stats) > 0 {
			b.WriteString(table.AnalysisLaTeX(stats))
		}
		if rows != nil {
			b.WriteString(table.LaTeX(rows))
		}
		_, err = fmt.Fprint(out, b.String())
		return err
	}
	_, err = fmt.Fprint(out, report.Tables(rows, stats))
	return err
}

// intoFile rewrites, in the Markdown file path, every block between
// "<!-- xp:results RUN -->" and "<!-- /xp:results -->" with the tables of
// the run folder RUN (relative to the current folder), read from its
// records, and every "<!-- xp:agreement CLAIMS -->" block with the
// verdict tables of a claims file (configs/published.yaml):
// documents whose numbers and verdicts are regenerated, never typed, by
// the generator make paper-tables uses (report.FillBlocks). A block
// whose run is missing or unreadable is left as it was, and reported.
func intoFile(path string, out io.Writer) error {
	doc, err := xio.ReadFileMax(path, xio.MaxText)
	if err != nil {
		return err
	}
	if bytes.Contains(doc, []byte("<!-- xp:runs ")) {
		// A runs block is filled from its claims file, with the page
		// beside the document: report.PaperDocs's whole job.
		return fmt.Errorf("%s is written by make paper-tables from its claims file (its xp:runs block says which): run make paper-tables, not xp results --into", path)
	}
	updated, n, problems := report.FillBlocks(doc, report.Blocks{Warn: stderr})
	for _, p := range problems {
		fmt.Fprintf(stderr, "xp: %s: %v (block left as it was)\n", path, p)
	}
	if err := xio.WriteFileAtomic(path, updated); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %d of %d result blocks regenerated from their records\n", path, n-len(problems), n)
	return nil
}

// plotCmd redraws the plots of the last run in OUTDIR.
func plotCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	metric := fs.String("metric", "", "draw only this utility metric: "+strings.Join(report.PlotMetrics, ", ")+" (default: accuracy and privacy figures)")
	x := fs.String("x", "epsilon", "horizontal axis: "+strings.Join(report.PlotAxes, ", ")+" (a privacy statistic: the privacy–utility frontier, comparable across notions; n_w and recovery need the config's privacy measures)")
	dir := fs.String("out", "", "folder to write (default OUTDIR/plots)")
	formats := fs.String("format", strings.Join(report.PlotFormats, ","), "comma-separated formats: "+strings.Join(report.PlotFormats, ", "))
	width := fs.Float64("width", 3.4, "width of one panel in inches (3.4: one column of a two-column paper; 7: a full page width for one panel)")
	height := fs.Float64("height", 2.8, "height in inches")
	font := fs.Float64("font", 9, "font size in points")
	const usage = "usage: xp plot [--metric M] [--x epsilon|unchanged|n_w|recovery] [--out DIR] [--format png,svg,pdf] [--width IN] [--height IN] [--font PT] OUTDIR"
	if err := parseFlags(fs, args, usage, out); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(usage)
	}
	opt := report.PlotOptions{Metric: *metric, X: *x, Formats: strings.Split(*formats, ","), Out: *dir,
		Width: vg.Length(*width) * vg.Inch, Height: vg.Length(*height) * vg.Inch, FontSize: vg.Length(*font)}
	st, rows, stats, err := rundir.ReadTables(fs.Arg(0))
	if err != nil {
		return err
	}
	report.Incomplete(stderr, st)
	name := st.Plan.Config.Name
	var paths []string
	if *metric == "" && *x == "epsilon" {
		if paths, err = report.PlotAnalysis(fs.Arg(0), name, stats); err != nil {
			return err
		}
	}
	if rows != nil {
		more, err := report.Plot(fs.Arg(0), name, rows, opt)
		if err != nil {
			return err
		}
		paths = append(paths, more...)
	} else if *metric != "" || *x != "epsilon" {
		return fmt.Errorf("%s: no utility table: --metric and --x draw utility figures", fs.Arg(0))
	}
	for _, a := range report.Undrawn(stats) {
		fmt.Fprintf(out, "analysis %s has no figure: its numbers are in %s\n", a, filepath.Join(fs.Arg(0), "tables", "analysis.md"))
	}
	if len(paths) == 0 && rows == nil {
		return fmt.Errorf("%s: nothing to draw", fs.Arg(0))
	}
	for _, p := range paths {
		fmt.Fprintln(out, "wrote", p)
	}
	return nil
}
