package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/xp-nlp/xp/console"
	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/runner"
	"github.com/xp-nlp/xp/slurm"
)

// slurmCmd writes (and with --submit submits) a sweep's Slurm jobs.
const slurmUsage = "usage: xp slurm [--set k=v]... [--partition P] [--gres gpu:1] [--cpus-per-task N] [--mem M] [--time T] [--array-parallel K] [--account A] [--sbatch-arg ARG]... [--tasks N] [--submit] CONFIG.yaml"

func slurmCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("slurm", flag.ContinueOnError)
	var sets, sbatch setFlags
	fs.Var(&sets, "set", "override a config key: path.to.key=value (repeatable), as in xp run")
	fs.Var(&sbatch, "sbatch-arg", "one more sbatch option for every job, e.g. --sbatch-arg=--qos=low (repeatable)")
	data := fs.String("data", datasets.RootFromEnv(), "data root when the config has no data key (default $"+datasets.EnvRoot+"); on a shared filesystem")
	var o slurm.Options
	fs.StringVar(&o.Partition, "partition", "", "partition (sbatch --partition)")
	fs.StringVar(&o.Gres, "gres", "", "generic resources per task, e.g. gpu:1 (a config with device auto then runs on cuda)")
	fs.IntVar(&o.CPUsPerTask, "cpus-per-task", 0, "cores per task; each task runs libtorch on that many threads")
	fs.StringVar(&o.Mem, "mem", "", "memory per task (sbatch --mem), e.g. 16G")
	fs.StringVar(&o.Time, "time", "", "time limit per task (sbatch --time), e.g. 4:00:00")
	fs.StringVar(&o.Account, "account", "", "account to charge (sbatch --account)")
	fs.IntVar(&o.ArrayParallel, "array-parallel", 0, "at most K array tasks at once (%K; 0: no throttle)")
	fs.IntVar(&o.Tasks, "tasks", 0, "array tasks N (0: one per group of cells, at most 1000); fixed by a run folder's first submission")
	fs.BoolVar(&o.Submit, "submit", false, "submit the jobs (default: write the scripts and print how to submit them)")
	if err := parseFlags(fs, args, slurmUsage, out); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(slurmUsage)
	}
	if o.CPUsPerTask < 0 || o.ArrayParallel < 0 || o.Tasks < 0 {
		return fmt.Errorf("--cpus-per-task %d, --array-parallel %d, --tasks %d: want ≥ 0", o.CPUsPerTask, o.ArrayParallel, o.Tasks)
	}
	o.SbatchArgs = sbatch
	c, err := experiments.Load(fs.Arg(0), experiments.Options{Set: sets, DataRoot: *data})
	if err != nil {
		return err
	}
	gpu := strings.Contains(o.Gres, "gpu")
	switch d := strings.TrimSpace(c.Device); {
	case d == "auto":
		// Every task must compute the same keys, whatever node it lands on.
		c.Device = map[bool]string{true: "cuda", false: "cpu"}[gpu]
		fmt.Fprintf(stderr, "device auto: the jobs run on %s (--gres %q)\n", c.Device, o.Gres)
	case strings.HasPrefix(d, "cuda:") && gpu:
		// Slurm shows each task only its own GPUs (CUDA_VISIBLE_DEVICES):
		// the first visible one is the task's.
		c.Device = "cuda"
		fmt.Fprintf(stderr, "device %s: each task runs on the first GPU Slurm assigns it (cuda)\n", d)
	case strings.HasPrefix(d, "cuda") && !gpu:
		return fmt.Errorf("device %s but no GPU asked of Slurm: add --gres gpu:1 (or --set device=cpu)", d)
	}
	if o.Exe, err = os.Executable(); err != nil {
		return err
	}
	if *data != "" {
		o.Env = append(o.Env, datasets.EnvRoot+"="+*data)
	}
	o.Log = stderr
	sum, err := runner.Run(ctx, c, runner.Options{Launcher: slurm.Launcher{Options: o}, Queue: true, Log: stderr, Progress: stderr})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, sum.Out) // the run folder
	return nil
}

// statusCmd prints how far a run folder is: done, failed and missing
// cells, and its Slurm jobs still queued or running.
func statusCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	const usage = "usage: xp status OUTDIR"
	if err := parseFlags(fs, args, usage, out); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(usage)
	}
	return console.Status(ctx, out, fs.Arg(0))
}
