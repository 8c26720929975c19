package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// numChunks is how many translation units the generated bindings are split
// into. It is fixed (not the core count) so that object files cached on one
// machine stay valid on another; 6 keeps two to sixteen cores busy.
const numChunks = 6

// libName is the shared library holding gotch's C API and xp's additions.
const libName = "libxptorch.so"

// Manifest records what one C++ build was made from and what it stubbed.
type Manifest struct {
	Key           string   `json:"key"`
	GotchVersion  string   `json:"gotch_version"`
	TorchVersion  string   `json:"torch_version"`
	TorchPackage  string   `json:"torch_package,omitempty"`
	TorchRoot     string   `json:"torch_root"`
	TorchLibDir   string   `json:"torch_lib_dir"`
	CUDA          bool     `json:"cuda"`
	CXX11ABI      bool     `json:"cxx11_abi"`
	Compiler      string   `json:"compiler"`
	Flags         []string `json:"flags"`
	Stubbed       []string `json:"stubbed"`
	BuildSeconds  float64  `json:"build_seconds"`
	LibPath       string   `json:"lib_path"`
	LinkLibraries []string `json:"link_libraries"`
}

// cxxBuild compiles gotch's C++ half (plus xp's extension) into one shared
// library under dir, against the libtorch t.
type cxxBuild struct {
	gotchLibtch  string // gotch's libtch directory (read only)
	gotchVersion string
	torch        *Torch
	dir          string // build/torch/<key>
	jobs         int
	log          func(format string, args ...any)
}

func (b *cxxBuild) flags() []string {
	abi := "0"
	if b.torch.CXX11ABI {
		abi = "1"
	}
	std := os.Getenv("XP_CXX_STD")
	if std == "" {
		std = "c++17"
	}
	f := []string{"-std=" + std, "-fPIC", "-O2", "-w", "-D_GLIBCXX_USE_CXX11_ABI=" + abi}
	for _, inc := range b.torch.IncludeDirs {
		if inc == "/usr/include" || inc == "/usr/local/include" {
			continue // already searched; naming it again breaks #include_next
		}
		f = append(f, "-isystem", inc)
	}
	f = append(f, strings.Fields(os.Getenv("XP_CXXFLAGS"))...)
	return f
}

func (b *cxxBuild) linkLibraries() []string {
	libs := []string{"-ltorch", "-ltorch_cpu", "-lc10"}
	if b.torch.CUDA {
		// torch_cuda registers the CUDA backend from static initialisers and
		// no symbol of it is referenced directly: without --no-as-needed the
		// linker drops it and CUDA silently reports unavailable.
		libs = append(libs, "-Wl,--no-as-needed", "-ltorch_cuda", "-lc10_cuda", "-Wl,--as-needed")
	}
	return libs
}

// sources returns the translation units other than the generated chunks and
// the headers they include, as name → content.
func (b *cxxBuild) sources() (units, headers map[string]string, err error) {
	read := func(name string) (string, error) {
		data, err := os.ReadFile(filepath.Join(b.gotchLibtch, name))
		if err != nil {
			return "", fmt.Errorf("gotch source: %w", err)
		}
		return string(data), nil
	}
	headers = map[string]string{}
	for _, h := range []string{"torch_api.h", "torch_api_generated.h", "stb_image.h", "stb_image_write.h", "stb_image_resize.h"} {
		if headers[h], err = read(h); err != nil {
			return nil, nil, err
		}
	}
	// The header defines the thread-local error slot; with several
	// translation units it must be declared there and defined once.
	const def = "thread_local char *torch_last_err = nullptr;"
	if headers["torch_api.h"], err = replaceOnce(headers["torch_api.h"], def, "extern thread_local char *torch_last_err;", "torch_api.h"); err != nil {
		return nil, nil, err
	}
	api, err := read("torch_api.cpp")
	if err != nil {
		return nil, nil, err
	}
	if api, err = replaceOnce(api, "#include \"torch_api_generated.cpp.h\"", "// generated bindings: compiled separately as gen_*.cpp", "torch_api.cpp"); err != nil {
		return nil, nil, err
	}
	if api, err = replaceOnce(api, "using namespace std;\n", "using namespace std;\n\n"+def+"\n", "torch_api.cpp"); err != nil {
		return nil, nil, err
	}
	ext, err := overlay.ReadFile("overlay/xp_ext.cpp")
	if err != nil {
		return nil, nil, err
	}
	extH, err := overlay.ReadFile("overlay/xp_ext.h")
	if err != nil {
		return nil, nil, err
	}
	headers["xp_ext.h"] = string(extH)
	units = map[string]string{"torch_api.cpp": api, "xp_ext.cpp": string(ext)}
	return units, headers, nil
}

func replaceOnce(s, old, new, file string) (string, error) {
	if n := strings.Count(s, old); n != 1 {
		return "", fmt.Errorf("patch %s: expected one %q, found %d (is this gotch v0.9.1?)", file, old, n)
	}
	return strings.Replace(s, old, new, 1), nil
}

// run builds the library unless an identical build is already there, and
// returns its manifest.
func (b *cxxBuild) run(ctx context.Context, inputKey string) (*Manifest, error) {
	manifestPath := filepath.Join(b.dir, "manifest.json")
	if m, err := readManifest(manifestPath); err == nil && m.Key == inputKey && fileExists(m.LibPath) {
		b.log("libxptorch up to date (%s, libtorch %s%s, %d stubbed): no C++ compiled", shortKey(inputKey), b.torch.Version, cudaWord(b.torch.CUDA), len(m.Stubbed))
		return m, nil
	}
	start := time.Now()
	compiler, err := compilerVersion()
	if err != nil {
		return nil, err
	}
	units, headers, err := b.sources()
	if err != nil {
		return nil, err
	}
	genSrc, err := os.ReadFile(filepath.Join(b.gotchLibtch, "torch_api_generated.cpp.h"))
	if err != nil {
		return nil, fmt.Errorf("gotch source: %w", err)
	}
	funcs, err := parseGenerated(string(genSrc))
	if err != nil {
		return nil, err
	}
	srcDir := filepath.Join(b.dir, "src")
	if err := os.MkdirAll(srcDir, 0o755); err != nil {
		return nil, err
	}
	for name, text := range headers {
		if err := writeIfChanged(filepath.Join(srcDir, name), []byte(text)); err != nil {
			return nil, err
		}
	}
	// The hand-written units must compile as they are.
	for name, text := range units {
		if err := writeIfChanged(filepath.Join(srcDir, name), []byte(text)); err != nil {
			return nil, err
		}
	}
	chunks := splitChunks(funcs, numChunks)
	stubbed, err := b.findStubs(ctx, srcDir, chunks, hashStrings(string(genSrc), headers["torch_api.h"], compiler, strings.Join(b.flags(), " ")))
	if err != nil {
		return nil, err
	}
	names := []string{"torch_api.cpp", "xp_ext.cpp"}
	for _, c := range chunks {
		text, _ := c.render(stubbed, b.torch.Version)
		if err := writeIfChanged(filepath.Join(srcDir, c.Name), []byte(text)); err != nil {
			return nil, err
		}
		names = append(names, c.Name)
	}
	objs, err := b.compileAll(ctx, srcDir, names, headers, compiler)
	if err != nil {
		return nil, err
	}
	lib := filepath.Join(b.dir, libName)
	if err := b.link(ctx, lib, objs); err != nil {
		return nil, err
	}
	stubList := make([]string, 0, len(stubbed))
	for n := range stubbed {
		stubList = append(stubList, n)
	}
	sort.Strings(stubList)
	m := &Manifest{
		Key: inputKey, GotchVersion: b.gotchVersion, TorchVersion: b.torch.Version, TorchPackage: b.torch.Package,
		TorchRoot: b.torch.Root, TorchLibDir: b.torch.LibDir, CUDA: b.torch.CUDA, CXX11ABI: b.torch.CXX11ABI,
		Compiler: compiler, Flags: b.flags(), Stubbed: stubList, BuildSeconds: time.Since(start).Seconds(),
		LibPath: lib, LinkLibraries: b.linkLibraries(),
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := writeFileAtomic(manifestPath, append(data, '\n')); err != nil {
		return nil, err
	}
	b.log("built %s in %.0fs (libtorch %s%s, %d of %d generated functions stubbed)", lib, m.BuildSeconds, b.torch.Version, cudaWord(b.torch.CUDA), len(stubList), len(funcs))
	return m, nil
}

// findStubs syntax-checks the generated chunks and stubs every function the
// compiler rejects, until all chunks compile. The result is cached in the
// build directory under a key of everything that decides it.
func (b *cxxBuild) findStubs(ctx context.Context, srcDir string, chunks []chunk, key string) (map[string]bool, error) {
	cache := filepath.Join(b.dir, "stubs-"+shortKey(key)+".txt")
	if data, err := os.ReadFile(cache); err == nil {
		stubbed := map[string]bool{}
		for _, n := range strings.Fields(string(data)) {
			stubbed[n] = true
		}
		b.log("reusing the list of %d stubbed functions from %s", len(stubbed), cache)
		return stubbed, nil
	}
	stubbed := map[string]bool{}
	pending := chunks
	for round := 1; len(pending) > 0; round++ {
		if round > 4 {
			return nil, fmt.Errorf("generated bindings still fail to compile after %d rounds of stubbing", round-1)
		}
		b.log("checking %d generated units against libtorch %s (round %d)", len(pending), b.torch.Version, round)
		var mu sync.Mutex
		var next []chunk
		err := parallel(ctx, b.jobs, len(pending), func(i int) error {
			c := pending[i]
			text, starts := c.render(stubbed, b.torch.Version)
			file := filepath.Join(srcDir, "check_"+c.Name)
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				return err
			}
			defer os.Remove(file)
			args := append(b.flags(), "-fsyntax-only", "-I", srcDir, file)
			out, err := b.compiler(ctx, args...)
			if err == nil {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed, perr := failedFunctions(out, filepath.Base(file), c, starts)
			if perr != nil {
				return perr
			}
			if len(failed) == 0 {
				return fmt.Errorf("%s failed to compile and no function could be blamed:\n%s", c.Name, firstLines(out, 40))
			}
			mu.Lock()
			defer mu.Unlock()
			for n := range failed {
				stubbed[n] = true
			}
			next = append(next, c)
			return nil
		})
		if err != nil {
			return nil, err
		}
		pending = next
	}
	names := make([]string, 0, len(stubbed))
	for n := range stubbed {
		names = append(names, n)
	}
	sort.Strings(names)
	if err := writeFileAtomic(cache, []byte(strings.Join(names, "\n")+"\n")); err != nil {
		return nil, err
	}
	return stubbed, nil
}

// compileAll compiles each unit into an object named by the hash of all
// that goes into it, skipping objects already there.
func (b *cxxBuild) compileAll(ctx context.Context, srcDir string, names []string, headers map[string]string, compiler string) ([]string, error) {
	objDir := filepath.Join(b.dir, "obj")
	if err := os.MkdirAll(objDir, 0o755); err != nil {
		return nil, err
	}
	hdrKeys := make([]string, 0, len(headers))
	for n := range headers {
		hdrKeys = append(hdrKeys, n)
	}
	sort.Strings(hdrKeys)
	var hdrs []string
	for _, n := range hdrKeys {
		hdrs = append(hdrs, n, headers[n])
	}
	hdrHash := hashStrings(hdrs...)
	objs := make([]string, len(names))
	var todo []int
	for i, name := range names {
		src, err := os.ReadFile(filepath.Join(srcDir, name))
		if err != nil {
			return nil, err
		}
		h := hashStrings(string(src), hdrHash, compiler, strings.Join(b.flags(), " "), b.torch.Version, b.torch.LibStamp)
		objs[i] = filepath.Join(objDir, strings.TrimSuffix(name, ".cpp")+"-"+shortKey(h)+".o")
		if !fileExists(objs[i]) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return objs, nil
	}
	b.log("compiling %d C++ units with %d jobs (a few minutes the first time; cached afterwards)", len(todo), b.jobs)
	err := parallel(ctx, b.jobs, len(todo), func(k int) error {
		i := todo[k]
		t0 := time.Now()
		tmp := objs[i] + ".tmp"
		args := append(b.flags(), "-I", srcDir, "-c", filepath.Join(srcDir, names[i]), "-o", tmp)
		if out, err := b.compiler(ctx, args...); err != nil {
			return fmt.Errorf("compile %s: %w\n%s", names[i], err, firstLines(out, 40))
		}
		b.log("  %s (%.0fs)", names[i], time.Since(t0).Seconds())
		return os.Rename(tmp, objs[i])
	})
	return objs, err
}

func (b *cxxBuild) link(ctx context.Context, lib string, objs []string) error {
	args := []string{"-shared", "-o", lib + ".tmp", "-Wl,-soname," + libName}
	args = append(args, objs...)
	args = append(args, "-L"+b.torch.LibDir, "-Wl,-rpath,"+b.torch.LibDir)
	args = append(args, b.linkLibraries()...)
	if out, err := b.compiler(ctx, args...); err != nil {
		return fmt.Errorf("link %s: %w\n%s", lib, err, firstLines(out, 40))
	}
	return os.Rename(lib+".tmp", lib)
}

// compiler runs the C++ compiler in the C locale (plain quotes in
// diagnostics) and returns its combined output.
func (b *cxxBuild) compiler(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, cxx(), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// parallel runs f(0..n-1) on up to jobs goroutines and returns the first error.
func parallel(ctx context.Context, jobs, n int, f func(i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, max(jobs, 1))
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
			defer func() { <-sem }()
			if err := f(i); err != nil {
				errs <- err
				cancel()
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	var first error
	for err := range errs {
		if first == nil || (errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	return first
}

func readManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

func cudaWord(cuda bool) string {
	if cuda {
		return ", CUDA"
	}
	return ", CPU"
}
