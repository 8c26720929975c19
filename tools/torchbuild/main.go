// Command torchbuild prepares xp's binding to libtorch: it compiles the C++
// half of github.com/sugarme/gotch (plus xp's small extension) into
// build/torch/<config>/libxptorch.so against whatever libtorch is installed,
// stubbing each generated binding that this libtorch cannot compile, writes a
// patched copy of gotch's Go half to build/gotch, and points the Go build at
// it with a generated go.work. Everything is cached: a second run with
// nothing changed compiles no C++.
//
// Usage (normally through make):
//
//	go run ./tools/torchbuild [-libtorch DIR] [-cuda auto|on|off] [-out build] [-jobs N]
//	torchbuild -cxx-only -gotch DIR/libtch ...   (on a machine without Go)
//
// LIBTORCH and XP_CUDA set the defaults of -libtorch and -cuda; CXX picks
// the compiler, XP_CXXFLAGS adds compiler flags, XP_CXX_STD sets the C++
// standard (default c++17). See docs/build.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
)

// cxxRevision changes whenever torchbuild changes what it compiles (stub
// text, flags), so that caches keyed on it are invalidated.
const cxxRevision = "1"

const gotchModule = "github.com/sugarme/gotch"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "torchbuild:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		out      = flag.String("out", "build", "build directory")
		libtorch = flag.String("libtorch", os.Getenv("LIBTORCH"), "libtorch directory (include/ and lib/); empty: the system's (Debian libtorch-dev)")
		cuda     = flag.String("cuda", envOr("XP_CUDA", "auto"), "link CUDA: auto (when libtorch_cuda.so exists), on, off")
		jobs     = flag.Int("jobs", runtime.NumCPU(), "parallel compiler jobs")
		cxxOnly  = flag.Bool("cxx-only", false, "build only libxptorch.so (for a machine without Go); needs -gotch")
		gotchDir = flag.String("gotch", "", "gotch's module directory (default: from the Go module cache, version from go.mod)")
		gotchVer = flag.String("gotch-version", "", "gotch version (default: from go.mod)")
		quiet    = flag.Bool("q", false, "print only errors and a one-line summary")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	logf := func(format string, args ...any) {
		if !*quiet {
			fmt.Fprintf(os.Stderr, "torchbuild: "+format+"\n", args...)
		}
	}
	ver := *gotchVer
	if ver == "" && !*cxxOnly {
		v, err := requiredVersion("go.mod", gotchModule)
		if err != nil {
			return err
		}
		ver = v
	}
	src := *gotchDir
	if src == "" {
		if *cxxOnly {
			return fmt.Errorf("-cxx-only needs -gotch (a copy of gotch's module directory)")
		}
		d, err := moduleDir(ctx, gotchModule, ver)
		if err != nil {
			return err
		}
		src = d
	}
	torch, err := findTorch(*libtorch, *cuda)
	if err != nil {
		return err
	}
	compiler, err := compilerVersion()
	if err != nil {
		return err
	}
	outAbs, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	b := &cxxBuild{gotchLibtch: filepath.Join(src, "libtch"), gotchVersion: ver, torch: torch, jobs: *jobs, log: logf}
	cfgKey := hashStrings(cxxRevision, torch.Root, torch.LibDir, torch.Version, torch.LibStamp, fmt.Sprint(torch.CUDA, torch.CXX11ABI), compiler, strings.Join(b.flags(), " "))
	b.dir = filepath.Join(outAbs, "torch", shortKey(cfgKey))
	inputKey, err := inputHash(b.gotchLibtch, cfgKey)
	if err != nil {
		return err
	}
	m, err := b.run(ctx, inputKey)
	if err != nil {
		return err
	}
	if *cxxOnly {
		data, _ := json.MarshalIndent(m, "", "  ")
		fmt.Println(string(data))
		return nil
	}
	overlayDir := filepath.Join(outAbs, "gotch")
	if err := writeOverlay(src, overlayDir, m); err != nil {
		return err
	}
	goVer, err := goDirective("go.mod")
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(mustGetwd(), overlayDir)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = overlayDir
	} else {
		rel = "./" + filepath.ToSlash(rel)
	}
	if err := writeIfChanged("go.work", []byte(goWork(goVer, ver, rel))); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "torchbuild: ready: gotch %s patched in %s, libtorch %s%s at %s, %d bindings stubbed\n",
		ver, rel, torch.Version, cudaWord(torch.CUDA), torch.LibDir, len(m.Stubbed))
	return nil
}

// inputHash covers every input of the C++ build: gotch's C++ sources, xp's
// extension and the build configuration.
func inputHash(libtch, cfgKey string) (string, error) {
	parts := []string{cfgKey}
	names := []string{"torch_api.cpp", "torch_api.h", "torch_api_generated.cpp.h", "torch_api_generated.h", "stb_image.h", "stb_image_write.h", "stb_image_resize.h"}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(libtch, n))
		if err != nil {
			return "", fmt.Errorf("gotch source: %w", err)
		}
		parts = append(parts, n, string(data))
	}
	entries, err := overlay.ReadDir("overlay")
	if err != nil {
		return "", err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".cpp") || strings.HasSuffix(e.Name(), ".h") {
			data, _ := overlay.ReadFile("overlay/" + e.Name())
			parts = append(parts, e.Name(), string(data))
		}
	}
	return hashStrings(parts...), nil
}

// moduleDir asks the go command where module@version is, downloading it
// into the module cache if needed. GOWORK=off: the go.work this tool
// writes must not be needed to find the module it patches.
func moduleDir(ctx context.Context, module, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, info.Error)
	}
	return info.Dir, nil
}

func requiredVersion(goMod, module string) (string, error) {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return "", fmt.Errorf("run torchbuild from xp's repository root: %w", err)
	}
	re := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + `\s+(v\S+)`)
	m := re.FindStringSubmatch(string(data))
	if m == nil {
		return "", fmt.Errorf("%s does not require %s", goMod, module)
	}
	return m[1], nil
}

func goDirective(goMod string) (string, error) {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^go\s+(\S+)`).FindStringSubmatch(string(data))
	if m == nil {
		return "", fmt.Errorf("%s has no go directive", goMod)
	}
	return m[1], nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}
