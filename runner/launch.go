package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/results"
	"github.com/xp-nlp/xp/rundir"
)

// A Launcher runs the shards of a sweep outside this process. Every shard
// is `xp run --shard i/n` on the resolved config in the run folder; the
// cells, their records, caches and resume stay the runner's, and a
// launcher only decides where each shard runs: Local in worker processes
// on this machine, the slurm package as a cluster's array job.
type Launcher interface {
	// Launch runs the shards of sw that have cells to run. It returns when
	// they have ended, or, for a batch scheduler (Options.Queue), once
	// they are queued.
	Launch(ctx context.Context, sw *Sweep) error
}

// Sweep is what a launcher starts: the run folder's resolved config and
// its cells with their groups and status (todo or cached).
type Sweep struct {
	Config string // the resolved config in the run folder
	Out    string // the run folder
	Groups int
	Cells  []rundir.CellStatus
	// Threads is the libtorch threads asked of each shard (0: the
	// launcher's choice).
	Threads int

	store *results.Store
}

// Todo returns the shards of n that hold a cell to run.
func (sw *Sweep) Todo(n int) []int {
	return rundir.ShardsOf(sw.Cells, n, func(cs rundir.CellStatus) bool { return cs.Status == "todo" })
}

// recorded counts the todo cells that have a record now.
func (sw *Sweep) recorded() int64 {
	var n int64
	for _, cs := range sw.Cells {
		if cs.Status == "todo" {
			if _, ok, _ := sw.store.Get(cs.Key); ok {
				n++
			}
		}
	}
	return n
}

// Local runs shards as worker processes of this machine, Workers at a
// time, each with an equal part of the cores. A worker dies with its
// parent (the parent-death signal, and a pipe it watches: see
// WatchParent); its log lines (one per finished cell) are passed on as
// they come; one that fails to start or crashes is reported with the
// tail of its output.
type Local struct {
	Workers int
	// Command returns the command that runs shard i of n with the given
	// libtorch threads on the resolved config.
	Command func(ctx context.Context, config string, shard, shards, threads int) *exec.Cmd
	// Progress receives the sweep's bar (counting records), Log the
	// workers' lines; either may be nil.
	Progress, Log io.Writer
}

// Launch runs one shard per worker and waits for them.
func (l Local) Launch(ctx context.Context, sw *Sweep) error {
	n := max(1, min(l.Workers, sw.Groups))
	shards := sw.Todo(n)
	if len(shards) == 0 {
		return nil
	}
	threads := sw.Threads
	if threads == 0 {
		threads = max(1, runtime.NumCPU()/len(shards))
	}
	todo := 0
	for _, cs := range sw.Cells {
		if cs.Status == "todo" {
			todo++
		}
	}
	var mu sync.Mutex // serializes lines written to Log
	var wg sync.WaitGroup
	errs := make([]error, len(shards))
	for j, shard := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[j] = l.worker(ctx, l.Command(ctx, sw.Config, shard, n, threads), &mu)
			if errs[j] != nil {
				errs[j] = fmt.Errorf("worker %d/%d: %w", shard, n, errs[j])
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	bar := progress.New(l.Progress, int64(todo), fmt.Sprintf("cells (%d workers)", len(shards)), false)
	var shown int64
	for {
		select {
		case <-done:
			bar.Add(sw.recorded() - shown)
			bar.Finish()
			if err := ctx.Err(); err != nil {
				return err
			}
			return errors.Join(errs...)
		case <-time.After(time.Second):
			n := sw.recorded()
			bar.Add(n - shown)
			shown = n
		}
	}
}

// worker runs one worker process to its end, passing its lines to Log.
// The OS thread that forks the worker stays locked until the worker ends:
// Linux sends the parent-death signal when the forking thread exits, not
// only the process, and Go may end an unlocked thread at any time.
func (l Local) worker(ctx context.Context, cmd *exec.Cmd, mu *sync.Mutex) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	// The worker watches its stdin: it reads EOF when this process is
	// gone however it ended (WatchParent), where the signal cannot reach.
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer w.Close()
	cmd.Stdin = r
	cmd.Env = append(cmd.Environ(), WorkerEnv+"=1")
	out, err := cmd.StderrPipe()
	if err != nil {
		r.Close()
		return err
	}
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		r.Close()
		return fmt.Errorf("start: %w", err)
	}
	r.Close()
	var tail []string
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		tail = append(tail, line)
		if len(tail) > 20 {
			tail = tail[1:]
		}
		if l.Log != nil {
			mu.Lock()
			fmt.Fprintln(l.Log, line)
			mu.Unlock()
		}
	}
	// A worker exits 0 when its cells are recorded, failed ones included
	// (the parent reports them from the records).
	if err := cmd.Wait(); err != nil && ctx.Err() == nil {
		if len(tail) == 0 {
			return fmt.Errorf("%v, printing nothing", err)
		}
		return fmt.Errorf("%v; its last lines:\n  %s", err, strings.Join(tail, "\n  "))
	}
	return nil
}

// WorkerEnv is set in the environment of Local's workers: such a process
// watches its stdin (WatchParent) and exits 0 when its cells are recorded,
// failed ones included.
const WorkerEnv = "XP_WORKER"

// WatchParent, in a worker of Local (WorkerEnv set), calls stop when its
// stdin reaches end of file: the parent is gone. It returns at once.
func WatchParent(stop func()) {
	if os.Getenv(WorkerEnv) != "1" {
		return
	}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		stop()
	}()
}
