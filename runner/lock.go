package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/xp-nlp/xp/internal/xio"
)

// LockName is the file in a run folder that processes running it lock:
// one run of the whole sweep holds it alone; shards of one sweep (each
// its own groups) share it. Its text names the last process that held it
// alone.
const LockName = ".xp.lock"

// errLocked marks a run folder another process is running.
var errLocked = errors.New("run folder in use")

// lockOutput takes the run folder's lock — shared for a shard, alone
// otherwise — without waiting: a second xp run on a folder that one is
// running is refused, saying which process runs it, instead of both
// training the same cells, resuming each other's checkpoints and
// replacing each other's records. release gives it back (the kernel does
// too when the process ends, however it ends).
func lockOutput(dir string, shared bool) (release func(), err error) {
	path := filepath.Join(dir, LockName)
	f, err := xio.OpenLock(path)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder, _ := xio.ReadFileMax(path, 4096)
			who := strings.TrimSpace(string(holder))
			if who == "" || shared {
				who = "another xp process"
			}
			return nil, fmt.Errorf("%w: %s is being run by %s: wait for it to end (xp status %s), or give this run another output", errLocked, dir, who, dir)
		}
		if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
			return func() { f.Close() }, nil // a file system without locks: run unguarded, as before
		}
		return nil, fmt.Errorf("output: lock %s: %w", path, err)
	}
	if !shared {
		host, _ := os.Hostname()
		f.Truncate(0)
		fmt.Fprintf(f, "process %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	}
	return func() { f.Close() }, nil
}
