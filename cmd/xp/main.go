// Command xp runs privacy–utility studies of word-level text privatization.
//
//	xp doctor            describe the libtorch installation xp is linked against
//	xp smoke [flags]     train a tiny BiLSTM on a synthetic problem (checks the binding)
//	xp data list|get|show  the data root: what is there, fetch what is not
//	xp privatize CONFIG  write the tokens one cell of a config trains or is tested on
//	xp model check DIR   what xp reads of a Hugging Face checkpoint, and its logits
//	xp run CONFIG        run an experiment sweep (resumable; see docs/config.md)
//	xp slurm CONFIG      spread a sweep over Slurm as an array job (docs/cluster.md)
//	xp status OUTDIR     done, failed and missing cells; Slurm jobs
//	xp results OUTDIR    print a run's table
//	xp plot OUTDIR       redraw a run's plots
//	xp report RUN...     one self-contained HTML page of runs
//	xp paper run|plan|tables  the founding papers' runs (records/paper) and the reproduction documents
//	xp version           version, commit, libtorch and devices
//	xp help [mechanisms|models|analyses|stages|measures]  usage, or their parameters
//
// xp only parses flags and wires packages together; see README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/near"
	"github.com/xp-nlp/xp/internal/show"
	"github.com/xp-nlp/xp/internal/vcs"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/mech/knn"
	"github.com/xp-nlp/xp/models"
	"github.com/xp-nlp/xp/runner"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/torchrt"
)

// mainStarted is when main began: what the process took before it
// (libtorch's libraries loaded) is its age then, which a dry run's
// estimate adds (startup), since the run's process pays it again. Set
// once, first thing in main.
var mainStarted time.Time

// stderr is standard error as every command writes its log, progress and
// errors: through show.Writer, so that no byte of a user's file (a word,
// a label, a path in a message) reaches the terminal raw. Standard output
// goes through it too (main).
var stderr = show.Writer(os.Stderr)

func main() {
	mainStarted = time.Now()
	passiveOpenMP()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C or SIGTERM ends xp at once, whatever it is doing
	}()
	runner.WatchParent(stop) // a worker process stops with its parent
	err := run(ctx, os.Args[1:], show.Writer(os.Stdout))
	stop()
	if err != nil {
		if errors.Is(err, errHelp) {
			return // the usage was asked for, and printed
		}
		fmt.Fprintln(stderr, "xp:", err)
		if errors.As(err, new(runner.Interrupted)) {
			os.Exit(130) // the shell's code for a process stopped by Ctrl-C
		}
		var f failedCells
		if errors.As(err, &f) {
			if os.Getenv(runner.WorkerEnv) == "1" {
				os.Exit(0) // recorded: the parent reports failed cells
			}
			os.Exit(min(f.n, 125))
		}
		os.Exit(1)
	}
}

// passiveOpenMP makes libtorch's OpenMP workers sleep when idle instead
// of spinning, unless the user chose a policy (OMP_WAIT_POLICY): xp
// re-executes itself once with OMP_WAIT_POLICY=passive. libgomp reads the
// variable when the process loads, before main, hence the exec. Spinning
// workers compete with OpenBLAS's threads for the cores, which slows
// training several times on a small machine (docs/models.md,
// BenchmarkTrainVsPyTorch). If the exec fails xp runs on as it is.
func passiveOpenMP() {
	if _, set := os.LookupEnv("OMP_WAIT_POLICY"); set {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := append(os.Environ(), "OMP_WAIT_POLICY=passive")
	syscall.Exec(exe, os.Args, env) // returns only on failure
}

// command is one of xp's commands: its name and aliases, its lines of
// the usage, and what runs it. commands is the one list of them: the
// usage is printed from it, run dispatches on it, and TestCommandList
// holds the package comment above to it.
type command struct {
	name    string
	aliases []string
	doc     string // the usage's text after the name (continuation lines indented)
	run     func(ctx context.Context, args []string, out io.Writer) error
}

func commands() []command {
	plain := func(f func([]string, io.Writer) error) func(context.Context, []string, io.Writer) error {
		return func(_ context.Context, args []string, out io.Writer) error { return f(args, out) }
	}
	return []command{
		{"doctor", nil, "describe the libtorch installation xp is linked against", plain(doctor)},
		{"smoke", nil, "train a tiny BiLSTM on a synthetic problem (checks the binding end to end)", smoke},
		{"data", nil, "list, get (download or mirror) and show datasets and embeddings", data},
		{"privatize", nil, "write the tokens one cell of a config trains or is tested on (TSV):\n" +
			"xp privatize [--set k=v]... [--setting S] [--eps E] [--seed N] [--split train|valid|test] CONFIG.yaml", privatize},
		{"model", nil, "check a Hugging Face checkpoint as xp reads it: xp model check [--json] CHECKPOINT [TEXT...]", plain(modelCmd)},
		{"run", nil, "run an experiment: xp run [--set k=v]... [--dry-run] [--workers N] CONFIG.yaml", runCmd},
		{"slurm", nil, "write (--submit: submit) a sweep as Slurm jobs: xp slurm [--set k=v]... [--partition P] [--gres gpu:1]\n" +
			"[--cpus-per-task N] [--mem M] [--time T] [--array-parallel K] [--account A] [--tasks N] [--submit] CONFIG.yaml", slurmCmd},
		{"status", nil, "done, failed and missing cells of a run folder, and its Slurm jobs: xp status OUTDIR", statusCmd},
		{"results", nil, "print the table of a run (finished or partial): xp results [--csv] OUTDIR; test its lines against each other: xp results --compare OUTDIR 'LINE A' 'LINE B'...", plain(resultsCmd)},
		{"plot", nil, "redraw the plots of a run: xp plot OUTDIR", plain(plotCmd)},
		{"report", nil, "one self-contained web page of runs (tables, figures, provenance, published values):\n" +
			"xp report [--out FILE.html] [--claims FILE] [--paper] RUN [RUN...]", plain(reportCmd)},
		{"paper", nil, "the founding papers' runs and their documents (docs/reproduction.md):\n" +
			"xp paper run [--list] [NAME...]   runs each run of configs/published.yaml into records/paper (resumable)\n" +
			"xp paper plan [NAME...]           what would settle each unsettled claim: seeds (4 times in 5), and their cost\n" +
			"xp paper tables                   regenerates docs/reproduction.md and .html from the records alone", paperCmd},
		{"version", []string{"--version"}, "xp's version and commit, Go, libtorch, and the devices it sees", plain(version)},
		{"help", []string{"-h", "--help"}, "this text; xp help config: a config's keys; xp help mechanisms, models, analyses, stages, measures: their parameters, defaults and ranges", plain(help)},
	}
}

// usage is xp's usage, printed from commands.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: xp <command> [flags]\n\ncommands:\n")
	for _, c := range commands() {
		lines := strings.Split(c.doc, "\n")
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "            %s\n", l)
		}
	}
	return b.String()
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(out, usage())
		return errors.New("no command")
	}
	var names []string
	for _, c := range commands() {
		if c.name == args[0] || slices.Contains(c.aliases, args[0]) {
			return c.run(ctx, args[1:], out)
		}
		names = append(names, c.name)
	}
	return fmt.Errorf("unknown command %q%s\n%s", args[0], near.DidYouMean(args[0], names), usage())
}

// help prints the usage, or the descriptors of the mechanisms or models
// (the same tables docs/config.md shows).
func help(args []string, out io.Writer) error {
	if len(args) == 0 {
		_, err := fmt.Fprint(out, usage())
		return err
	}
	if args[0] == "config" {
		_, err := fmt.Fprintf(out, "a config's top-level keys: %s\n\nEach, its defaults and rules: docs/config.md. The parameters of each kind: xp help mechanisms, models, analyses, stages, measures.\n",
			strings.Join(experiments.TopKeys(), ", "))
		return err
	}
	kinds := map[string]spec.Kind{"mechanisms": spec.Mechanism, "models": spec.Model, "analyses": spec.Analysis, "stages": spec.Stage, "measures": spec.Measure}
	k, ok := kinds[args[0]]
	if !ok {
		return fmt.Errorf("help %q: want config, mechanisms, models, analyses, stages or measures%s", args[0], near.DidYouMean(args[0], []string{"config", "mechanisms", "models", "analyses", "stages", "measures"}))
	}
	_, err := fmt.Fprint(out, spec.Help(k))
	return err
}

// version prints what a record's provenance holds about the build: xp's
// module version and commit, Go, gotch, libtorch, and the devices.
func version(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := parseFlags(fs, args, "usage: xp version", out); err != nil {
		return err
	}
	v, commit := moduleVersion(), commitText()
	in := torchrt.Collect()
	dev := fmt.Sprintf("cpu (%d cores)", in.CPUs)
	switch {
	case in.CUDAAvailable:
		dev += fmt.Sprintf("; cuda: %d device(s)", in.CUDADevices)
	case in.CUDALinked:
		dev += "; cuda: built with CUDA, no device visible"
	default:
		dev += "; cuda: not built with CUDA"
	}
	_, err := fmt.Fprintf(out, "xp %s\ncommit   %s\ngo       %s\ngotch    %s\nlibtorch %s, %s\ndevices  %s\n",
		v, commit, in.GoVersion, in.GotchVersion, in.Torch(), in.TorchLibrary, dev)
	return err
}

// moduleVersion is xp's module version ("(devel)" for a build from a
// clone).
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// commitText is the commit xp was built from, and whether it had
// uncommitted changes.
func commitText() string {
	commit, dirty := vcs.Stamp()
	if commit == "" {
		commit = "unknown"
	}
	if dirty {
		commit += " (with uncommitted changes)"
	}
	return commit
}

// startup is how long this process took to reach main (0 where not
// known, as in tests, which do not run main).
func startup() time.Duration {
	if mainStarted.IsZero() {
		return 0
	}
	return max(0, xio.ProcessAge()-time.Since(mainStarted))
}

// buildVersion is the version and commit, as a page's generator.
func buildVersion() string { return moduleVersion() + ", commit " + commitText() }

func doctor(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	threads := fs.Int("threads", 0, "libtorch intra-op threads (0: one per core)")
	if err := parseFlags(fs, args, "usage: xp doctor [--threads N]", out); err != nil {
		return err
	}
	if err := torchrt.SetThreads(*threads); err != nil {
		return err
	}
	if err := torchrt.Collect().Write(out); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "%-18s%s; exact ranking in float64\n", "exact search:", knn.Describe(torchrt.CUDAAvailable()))
	return err
}

func smoke(ctx context.Context, args []string, out io.Writer) error {
	c := models.DefaultSmoke()
	fs := flag.NewFlagSet("smoke", flag.ContinueOnError)
	device := fs.String("device", "cpu", "cpu, cuda, cuda:N or auto")
	threads := fs.Int("threads", 0, "libtorch intra-op threads (0: one per core)")
	seed := fs.Uint64("seed", c.Seed, "seed of libtorch, the data and the batch order")
	steps := fs.Int("steps", c.Steps, "training steps")
	if err := parseFlags(fs, args, "usage: xp smoke [--device D] [--threads N] [--seed N] [--steps N]", out); err != nil {
		return err
	}
	d, err := torchrt.ParseDevice(*device)
	if err != nil {
		return err
	}
	if err := torchrt.SetThreads(*threads); err != nil {
		return err
	}
	c.Device, c.Seed, c.Steps = d, *seed, *steps
	start := time.Now()
	res, err := models.TrainSmoke(ctx, c)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	for i, l := range res.Losses {
		if i%10 == 0 || i == len(res.Losses)-1 {
			fmt.Fprintf(out, "step %3d  loss %.4f\n", i+1, l)
		}
	}
	fmt.Fprintf(out, "device %s, %d threads, seed %d: training accuracy %.3f, %d steps in %s (%.0f examples/s)\n",
		torchrt.DeviceString(d), torchrt.Threads(), c.Seed, res.Accuracy, len(res.Losses), elapsed.Round(time.Millisecond),
		float64(len(res.Losses)*c.Batch)/elapsed.Seconds())
	if res.Accuracy < 0.9 {
		return fmt.Errorf("smoke: training accuracy %.3f < 0.9: the binding does not learn", res.Accuracy)
	}
	return nil
}
