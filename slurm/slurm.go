package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xp-nlp/xp/internal/show"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/runner"
)

// MaxTasks caps the default number of array tasks (one per group).
const MaxTasks = 1000

// Options are the resources and shape of the jobs; the sbatch options
// of the same names.
type Options struct {
	Partition, Gres, Mem, Time, Account string
	CPUsPerTask                         int
	// ArrayParallel throttles the array (%K): at most K tasks at once (0:
	// Slurm's limit only).
	ArrayParallel int
	// SbatchArgs are more sbatch options, each one argument ("--qos=low").
	SbatchArgs []string
	// Tasks is N, the number of shards (0: one per group, at most
	// MaxTasks). A run folder keeps the N of its first submission.
	Tasks int
	// Submit submits the jobs; without it the scripts are only written.
	Submit bool
	// Exe is the xp binary the jobs run (absolute; on a shared
	// filesystem); Env are variables the scripts export (NAME=value).
	Exe string
	Env []string
	// Log receives what was written and submitted.
	Log io.Writer
}

// Launcher queues a sweep's shards on Slurm (runner.Launcher; use with
// runner.Options.Queue).
type Launcher struct{ Options }

// Dir is the run folder's Slurm folder: scripts, logs, jobs.json.
func Dir(out string) string { return filepath.Join(out, "slurm") }

// Submission is one submission of a run: its job ids and the shards the
// array ran.
type Submission struct {
	Time    string `json:"time"`
	Prepare string `json:"prepare"`
	Array   string `json:"array"`
	Merge   string `json:"merge"`
	Tasks   int    `json:"tasks"`  // N
	Shards  []int  `json:"shards"` // the array's indices
}

// Jobs are the submissions of a run folder, oldest first.
type Jobs struct {
	Tasks       int          `json:"tasks"` // N, fixed by the first submission
	Submissions []Submission `json:"submissions"`
}

// ReadJobs reads the run folder's jobs.json (empty when none).
func ReadJobs(out string) (Jobs, error) {
	var j Jobs
	b, err := xio.ReadFileMax(filepath.Join(Dir(out), "jobs.json"), xio.MaxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return j, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &j)
	}
	if err != nil {
		return j, fmt.Errorf("slurm: %s: %w", filepath.Join(Dir(out), "jobs.json"), err)
	}
	return j, nil
}

func writeJobs(out string, j Jobs) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return xio.WriteFileAtomic(filepath.Join(Dir(out), "jobs.json"), append(b, '\n'))
}

// Launch writes the scripts into the run folder and, with Submit, submits
// the preparation job, the array of the shards that have cells to run,
// and the merge job; it returns once they are queued.
func (l Launcher) Launch(ctx context.Context, sw *runner.Sweep) error {
	if l.Exe == "" || !filepath.IsAbs(l.Exe) {
		return fmt.Errorf("slurm: the xp binary %q is not an absolute path", l.Exe)
	}
	dir := Dir(sw.Out)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o777); err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	jobs, err := ReadJobs(sw.Out)
	if err != nil {
		return err
	}
	n := l.Tasks
	switch {
	case jobs.Tasks > 0 && n > 0 && n != jobs.Tasks:
		return fmt.Errorf("slurm: %s was submitted as %d tasks; --tasks %d would regroup its shards (use another output folder, or leave --tasks out)", sw.Out, jobs.Tasks, n)
	case jobs.Tasks > 0:
		n = jobs.Tasks
	case n == 0:
		n = min(max(sw.Groups, 1), MaxTasks)
	}
	shards := sw.Todo(n)
	scripts, err := l.write(sw, n)
	if err != nil {
		return err
	}
	logf := func(format string, args ...any) {
		if l.Log != nil {
			fmt.Fprintf(l.Log, format+"\n", args...)
		}
	}
	if len(shards) == 0 {
		logf("every cell of %s has a successful record: nothing to submit (tables: xp run --merge %s)", sw.Out, sw.Config)
		return nil
	}
	array := "--array=" + Ranges(shards)
	if l.ArrayParallel > 0 {
		array += "%" + strconv.Itoa(l.ArrayParallel)
	}
	if !l.Submit {
		logf("wrote %s; submit with:\n  p=$(sbatch --parsable %s)\n  a=$(sbatch --parsable --dependency=afterany:$p %s)\n  sbatch --dependency=afterany:$a %s\n(or xp slurm --submit)",
			dir, show.Shell(scripts[0]), show.ShellLine(array, scripts[1]), show.Shell(scripts[2]))
		return nil
	}
	sub := Submission{Time: time.Now().UTC().Format(time.RFC3339), Tasks: n, Shards: shards}
	if sub.Prepare, err = Sbatch(ctx, scripts[0]); err != nil {
		return err
	}
	if sub.Array, err = Sbatch(ctx, "--dependency=afterany:"+sub.Prepare, array, scripts[1]); err != nil {
		return err
	}
	if sub.Merge, err = Sbatch(ctx, "--dependency=afterany:"+sub.Array, scripts[2]); err != nil {
		return err
	}
	jobs.Tasks = n
	jobs.Submissions = append(jobs.Submissions, sub)
	if err := writeJobs(sw.Out, jobs); err != nil {
		return err
	}
	logf("submitted to Slurm: preparation job %s, array job %s (%d of %d tasks: %s), merge job %s; logs in %s; watch with xp status %s",
		sub.Prepare, sub.Array, len(shards), n, Ranges(shards), sub.Merge, filepath.Join(dir, "logs"), sw.Out)
	return nil
}

// write writes the three scripts (prepare, array, merge) and returns
// their paths.
func (l Launcher) write(sw *runner.Sweep, n int) ([]string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	dir, logs := Dir(sw.Out), filepath.Join(Dir(sw.Out), "logs")
	type script struct{ name, output, doc, cmd string }
	scripts := []script{
		{"prepare.sbatch", "prepare-%j.out", "builds what the shards share (caches) once",
			fmt.Sprintf("run -q --prepare --threads \"${SLURM_CPUS_PER_TASK:-1}\" %s", show.Shell(sw.Config))},
		{"array.sbatch", "shard-%a-job%A.out", fmt.Sprintf("task i runs shard i of %d; submit a subset with --array=3,7 (N stays %d)", n, n),
			fmt.Sprintf("run -q --shard \"${SLURM_ARRAY_TASK_ID}/%d\" --threads \"${SLURM_CPUS_PER_TASK:-1}\" %s", n, show.Shell(sw.Config))},
		{"merge.sbatch", "merge-%j.out", "runs the stages and writes tables and plots once the array has ended",
			fmt.Sprintf("run -q --merge --threads \"${SLURM_CPUS_PER_TASK:-1}\" %s", show.Shell(sw.Config))},
	}
	var paths []string
	for _, s := range scripts {
		var b bytes.Buffer
		fmt.Fprintf(&b, "#!/bin/bash\n# Written by xp slurm: %s.\n", s.doc)
		opts := []string{"--job-name=xp-" + jobName(sw.Out), "--output=" + filepath.Join(logs, s.output), "--chdir=" + cwd}
		if s.name == "array.sbatch" {
			// A preempted task runs again, reusing its finished cells, and
			// appends to its log.
			opts = append(opts, "--requeue", "--open-mode=append")
		}
		opts = append(opts, l.resources()...)
		for _, o := range opts {
			// An #SBATCH line is one line: a line break in a value would
			// make the rest of it a line of the script.
			if strings.ContainsFunc(o, func(r rune) bool { return show.Unsafe(r) || r == '\n' || r == '\t' }) {
				return nil, fmt.Errorf("slurm: sbatch option %s holds a control character or line break", show.Shell(o))
			}
			fmt.Fprintf(&b, "#SBATCH %s\n", o)
		}
		b.WriteString("set -eu\n")
		for _, e := range l.Env {
			k, v, _ := strings.Cut(e, "=")
			if !envName(k) {
				return nil, fmt.Errorf("slurm: environment variable name %s: want letters, digits and _", show.Shell(k))
			}
			fmt.Fprintf(&b, "export %s=%s\n", k, show.Shell(v))
		}
		fmt.Fprintf(&b, "exec %s %s\n", show.Shell(l.Exe), s.cmd)
		path := filepath.Join(dir, s.name)
		if err := xio.WriteFileAtomic(path, b.Bytes()); err != nil {
			return nil, fmt.Errorf("slurm: %w", err)
		}
		if err := os.Chmod(path, 0o755); err != nil {
			return nil, fmt.Errorf("slurm: %w", err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// resources are the sbatch options of every job.
func (l Launcher) resources() []string {
	var o []string
	for _, kv := range [][2]string{{"partition", l.Partition}, {"gres", l.Gres}, {"mem", l.Mem}, {"time", l.Time}, {"account", l.Account}} {
		if kv[1] != "" {
			o = append(o, "--"+kv[0]+"="+kv[1])
		}
	}
	if l.CPUsPerTask > 0 {
		o = append(o, "--cpus-per-task="+strconv.Itoa(l.CPUsPerTask))
	}
	return append(o, l.SbatchArgs...)
}

func jobName(out string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\'' || r == '"' {
			return '_'
		}
		return r
	}, filepath.Base(out))
}

// envName reports whether k is a shell variable name.
func envName(k string) bool {
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return k != ""
}

// Ranges writes sorted indices as Slurm's array list: "0-3,7,9-10".
func Ranges(ix []int) string {
	var parts []string
	for i := 0; i < len(ix); {
		j := i
		for j+1 < len(ix) && ix[j+1] == ix[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ix[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ix[i], ix[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// clientTimeout bounds every call of a Slurm client: they block for
// seconds when slurmctld is unreachable.
const clientTimeout = 30 * time.Second

// Sbatch submits with sbatch --parsable and returns the job id.
func Sbatch(ctx context.Context, args ...string) (string, error) {
	out, err := client(ctx, "sbatch", append([]string{"--parsable"}, args...)...)
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";") // "id;cluster" on federations
	if id == "" {
		return "", fmt.Errorf("slurm: sbatch %s printed no job id", strings.Join(args, " "))
	}
	return id, nil
}

func client(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer in %s (is slurmctld reachable?)", clientTimeout)
		}
		return "", fmt.Errorf("slurm: %s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Task is a queued or running job (or array task) of a run.
type Task struct {
	ID    string // 12 or 13_4
	State string // PENDING, RUNNING, …
}

// Queue returns the run's jobs that squeue still lists, array tasks one
// by one.
func Queue(ctx context.Context, out string) ([]Task, error) {
	j, err := ReadJobs(out)
	if err != nil || len(j.Submissions) == 0 {
		return nil, err
	}
	ours := map[string]bool{}
	for _, s := range j.Submissions {
		ours[s.Prepare], ours[s.Array], ours[s.Merge] = true, true, true
	}
	// All jobs, filtered here: squeue -j fails on ids it has forgotten.
	text, err := client(ctx, "squeue", "-h", "-r", "-o", "%i|%F|%A|%T")
	if err != nil {
		return nil, err
	}
	var ts []Task
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Split(line, "|")
		if len(f) == 4 && (ours[f[1]] || ours[f[2]]) {
			ts = append(ts, Task{ID: f[0], State: f[3]})
		}
	}
	return ts, nil
}
