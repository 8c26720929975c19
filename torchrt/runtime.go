package torchrt

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	lib "github.com/sugarme/gotch/libtch"
	"github.com/sugarme/gotch/ts"
)

// ManualSeed seeds libtorch's default generators (CPU and every GPU): the
// parameter initialisation, dropout masks and any torch-side sampling that
// follows depend on it alone. Go-side randomness is seeded separately by
// its owner.
func ManualSeed(seed int64) { lib.AtManualSeed(seed) }

// SetThreads sets libtorch's intra-op thread count; n <= 0 means one per
// core. libtorch may otherwise default to a single thread.
//
// The count is OpenMP's, kept per OS thread, and a goroutine may resume
// on another OS thread after a call into C: the count is set and checked
// on one. (libtorch applies the last count set to each thread's first
// parallel work.)
func SetThreads(n int) error {
	if n <= 0 {
		n = runtime.NumCPU()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lib.AtSetNumThreads(n)
	if got := Threads(); got != n {
		return fmt.Errorf("set libtorch threads to %d: libtorch reports %d", n, got)
	}
	return nil
}

// Threads is libtorch's intra-op thread count.
func Threads() int { return lib.AtGetNumThreads() }

// Do runs f on a goroutine-locked OS thread, so that gotch's thread-local
// last error and libtorch's thread-local grad mode stay with the code that
// set them, and turns a panic inside f (gotch panics on some misuse) into an
// error. It cannot catch gotch's Must* functions, which call log.Fatal: code
// that runs under Do uses the error-returning forms.
func Do(f func() error) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("libtorch call panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return f()
}

// Err returns and clears the last libtorch error of this OS thread: one
// line, its detail kept (Detail).
func Err() error { return ts.TorchErr() }

// Detail is the whole text behind a libtorch error found in err's chain
// (libtorch's backtrace, the Go stack where it was read), for a file of
// traces; "" where err holds none.
func Detail(err error) string {
	var x *ts.XpError
	if errors.As(err, &x) {
		return x.Detail()
	}
	return ""
}

// Clean returns err's libtorch message alone. The binding's errors are one
// line already (*ts.XpError, see tools/torchbuild) and are returned as
// they are; an error whose text still carries gotch's old form
// ("Libtorch API Error: …" and a Go stack trace) is trimmed to the message.
func Clean(err error) error {
	var x *ts.XpError
	if err == nil || errors.As(err, &x) {
		return err
	}
	msg := err.Error()
	if i := strings.Index(msg, "\ngoroutine "); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "Libtorch API Error: "))
	return errors.New(msg)
}

// BuildInfo describes the libxptorch.so this binary links (see tools/torchbuild).
type BuildInfo struct {
	Key          string   // hash of every input of the C++ build
	GotchVersion string   // gotch module version patched
	TorchVersion string   // version in the headers built against
	TorchPackage string   // owning Debian package and version, if any
	TorchRoot    string   // LIBTORCH, or "" for the system's
	TorchLibDir  string   // directory of libtorch.so at build time
	LibPath      string   // libxptorch.so
	Compiler     string   // C++ compiler used
	CUDA         bool     // linked with libtorch_cuda
	CXX11ABI     bool     // compiled with _GLIBCXX_USE_CXX11_ABI=1
	Stubbed      []string // generated bindings replaced by stubs that return an error
}

// Build reports how the linked libtorch binding was built.
func Build() BuildInfo {
	b := lib.XpBuild
	return BuildInfo{
		Key: b.Key, GotchVersion: b.GotchVersion, TorchVersion: b.TorchVersion, TorchPackage: b.TorchPackage,
		TorchRoot: b.TorchRoot, TorchLibDir: b.TorchLibDir, LibPath: b.LibPath, Compiler: b.Compiler,
		CUDA: b.CUDA, CXX11ABI: b.CXX11ABI, Stubbed: append([]string(nil), b.Stubbed...),
	}
}

// Stubbed reports whether the generated binding name (e.g. "atg_scaled_dot_product_attention")
// was replaced by a stub because this libtorch cannot compile it.
func Stubbed(name string) bool {
	for _, s := range lib.XpBuild.Stubbed {
		if s == name {
			return true
		}
	}
	return false
}

// LiveTensors is the number of gotch tensors created and not yet freed in
// this process: a count that must not grow across the epochs of a
// training run.
func LiveTensors() int { return ts.LiveTensors() }

// PeakResidentBytes returns the process's peak resident memory so far
// (Linux, VmHWM in /proc/self/status).
func PeakResidentBytes() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}

// ResidentBytes returns the process's resident memory (Linux,
// /proc/self/statm): what leak tests and run provenance report.
func ResidentBytes() (int64, error) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/self/statm: unexpected %q", data)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/self/statm: %w", err)
	}
	return pages * int64(os.Getpagesize()), nil
}
