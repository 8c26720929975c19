// Package filelimit runs a test's body in a child process whose files
// cannot grow past a size (RLIMIT_FSIZE): a write beyond it fails with
// EFBIG as a write on a full disk fails with ENOSPC, so what a full disk
// does to a writer is tested on a folder of the test's own, never on a
// device of the machine's such as /dev/full.
package filelimit

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const envChild = "XP_FILELIMIT_CHILD"

// Child reports whether the calling test is the limited child: there it
// caps this process's file size at max bytes and returns true, and the
// test goes on with its body. In the test's own process it runs the test
// again in a child process (the same binary, only this test) and returns
// false, failing t with the child's output where the child failed; the
// test then returns.
//
//	if !filelimit.Child(t, 1<<16) {
//		return
//	}
//	// writes past 64 KiB fail from here on
func Child(t *testing.T, max int64) bool {
	t.Helper()
	if os.Getenv(envChild) == t.Name() {
		lim := syscall.Rlimit{Cur: uint64(max), Max: uint64(max)}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatalf("limit the file size to %d bytes: %v", max, err)
		}
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"="+t.Name())
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Errorf("the test's body, run with files limited to %s bytes: %v\n%s", strconv.FormatInt(max, 10), err, out)
	case !strings.Contains(string(out), "=== RUN   "+t.Name()):
		// A pattern that matched nothing would pass without running it.
		t.Errorf("the child process ran no test %s:\n%s", t.Name(), out)
	}
	return false
}
