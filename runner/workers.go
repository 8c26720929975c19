package runner

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/results"
)

// spawn runs the todo cells in worker processes (one shard each, all on
// the resolved config at path) and shows the sweep's progress by counting
// records.
func spawn(ctx context.Context, opt Options, path string, workers, todo int, store *results.Store, cells []CellStatus) error {
	threads := max(1, runtime.NumCPU()/workers)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		cmd := opt.Spawn(ctx, path, w, workers, threads)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() < 0 { // failed cells exit ≥ 1 and are recorded
					errs[w] = fmt.Errorf("worker %d: %v\n%s", w, err, tail(out))
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	bar := progress.New(opt.Progress, int64(todo), fmt.Sprintf("cells (%d workers)", workers), false)
	count := func() int64 {
		n := 0
		for _, cs := range cells {
			if cs.Status == "todo" {
				if _, ok, _ := store.Get(cs.Key); ok {
					n++
				}
			}
		}
		return int64(n)
	}
	var shown int64
	for {
		select {
		case <-done:
			bar.Add(count() - shown)
			bar.Finish()
			if err := ctx.Err(); err != nil {
				return err
			}
			return errors.Join(errs...)
		case <-time.After(time.Second):
			n := count()
			bar.Add(n - shown)
			shown = n
		}
	}
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}
