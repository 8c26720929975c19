package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/claims"
	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/report"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/runner"
)

const paperUsage = "usage: xp paper run [--claims FILE] [--list] [NAME...], xp paper plan [--claims FILE] [NAME...], or xp paper tables [--claims FILE] [--md FILE] [--html FILE]"

// paperCmd runs the claims file's runs into the records folder it names
// (resumable: cells with a record are reused) or regenerates the
// reproduction documents from those records (report.PaperDocs).
func paperCmd(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(paperUsage)
	}
	if args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(out, paperUsage)
		return errHelp
	}
	fs := flag.NewFlagSet("paper "+args[0], flag.ContinueOnError)
	file := fs.String("claims", "configs/"+claims.FileName, "the claims file: papers, runs and claims")
	switch args[0] {
	case "run":
		list := fs.Bool("list", false, "print each run's command and whether its records are complete; run nothing")
		quiet := fs.Bool("q", false, "no progress bars")
		if err := parseFlags(fs, args[1:], paperUsage, out); err != nil {
			return err
		}
		f, err := claims.Read(*file)
		if err != nil {
			return err
		}
		return paperRun(ctx, f, fs.Args(), *list, *quiet, out)
	case "plan":
		if err := parseFlags(fs, args[1:], paperUsage, out); err != nil {
			return err
		}
		f, err := claims.Read(*file)
		if err != nil {
			return err
		}
		return paperPlan(f, fs.Args(), out)
	case "tables":
		md := fs.String("md", "docs/reproduction.md", "the Markdown document whose generated blocks to rewrite (\"\": none)")
		html := fs.String("html", "docs/reproduction.html", "the page to write (\"\": none)")
		if err := parseFlags(fs, args[1:], paperUsage, out); err != nil {
			return err
		}
		return report.PaperDocs(*file, *md, *html, out)
	}
	return errors.New(paperUsage)
}

// paperRun runs the named runs of f (all when none is named), each its
// config with its overrides into its records folder. The records are
// kept in the repository: a run whose folder already holds all of it
// writes nothing (runner.Options.KeepComplete), and what a run writes
// names no path of this machine (experiments.Options.Portable). A run that fails
// (its data absent from the root, a failed cell) is reported and the
// others go on; the error lists them. A run whose pretrained checkpoint
// the data root lacks is reported and skipped, not failed: its claims
// read "needs the checkpoint".
func paperRun(ctx context.Context, f *claims.File, names []string, list, quiet bool, out io.Writer) error {
	for _, n := range names {
		if _, ok := f.Run(n); !ok {
			return fmt.Errorf("%s has no run %q", f.Path, n)
		}
	}
	var failed []string
	for _, r := range f.Runs {
		if len(names) > 0 && !slices.Contains(names, r.Name) {
			continue
		}
		sets := append(slices.Clone(r.Set), "output="+f.Dir(r.Name))
		if list {
			fmt.Fprintf(out, "%s: xp run %s --set %s\n", r.Name, f.ConfigPath(r), strings.Join(sets, " --set "))
			continue
		}
		fmt.Fprintf(out, "== %s\n", r.Name)
		c, err := experiments.Load(f.ConfigPath(r), experiments.Options{Set: sets, DataRoot: datasets.RootFromEnv(), Portable: true})
		if err == nil {
			opt := runner.Options{Log: stderr, Progress: stderr, KeepComplete: true}
			if quiet {
				opt.Progress = nil
			}
			var sum runner.Summary
			if sum, err = runner.Run(ctx, c, opt); err == nil && sum.Failed+sum.Missing > 0 {
				err = fmt.Errorf("%d of %d cells failed or missing", sum.Failed+sum.Missing, len(sum.Cells))
			}
			if err == nil {
				err = pruneStale(c.Output, out)
			}
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return err
		case errors.Is(err, runner.ErrNoCheckpoint):
			// The checkpoint is the user's to bring; its claims read
			// "needs the checkpoint" meanwhile.
			fmt.Fprintf(out, "%s: skipped, needs the checkpoint: %v\n", r.Name, err)
		case err != nil:
			fmt.Fprintf(out, "%s: %v\n", r.Name, err)
			failed = append(failed, r.Name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("paper runs failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// pruneStale removes from a finished paper run's folder the records of
// cells its plan no longer has (a re-planned run: ε or words changed),
// so that the records the repository keeps are exactly what its
// documents read; git keeps the ones removed.
func pruneStale(dir string, out io.Writer) error {
	st, err := rundir.ReadState(dir)
	if err != nil {
		return err
	}
	stale, err := st.Stale()
	if err != nil {
		return err
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		fmt.Fprintf(out, "%s: removed %d records of cells the plan no longer has\n", dir, len(stale))
	}
	return nil
}

// paperPlan prints, for each unsettled conclusion that reads one of the
// named runs (every run when none is named), what would settle it: the
// seeds its hardest comparison needs at the spread the records measure,
// and what they cost where the records were written (claims.Settle).
func paperPlan(f *claims.File, names []string, out io.Writer) error {
	for _, n := range names {
		if _, ok := f.Run(n); !ok {
			return fmt.Errorf("%s has no run %q", f.Path, n)
		}
	}
	as, err := f.Decide()
	if err != nil {
		return err
	}
	shown := 0
	for _, a := range as {
		if a.Verdict != claims.Unsettled || len(names) > 0 && !slices.ContainsFunc(a.Runs, func(r string) bool { return slices.Contains(names, r) }) {
			continue
		}
		shown++
		fmt.Fprintf(out, "%s, %s (%s; %s): %s\n", a.Cite, a.Claim.Item, a.Claim.Kind, strings.Join(a.Runs, ", "), a.Claim.Says)
		switch {
		case a.Settle != nil:
			fmt.Fprintf(out, "  unsettled: %s\n", a.Settle.Text())
		default:
			fmt.Fprintf(out, "  unsettled (%s): not a mean over seeds that more seeds narrow (a worst case over draws, an interpolation between grid ε, a search's bracket or simulated votes): more draws or a finer ε grid might\n", a.Reason)
		}
	}
	if shown == 0 {
		fmt.Fprintln(out, "no unsettled claim reads these runs")
	}
	return nil
}
