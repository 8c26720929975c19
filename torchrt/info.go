package torchrt

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	lib "github.com/sugarme/gotch/libtch"

	"github.com/xp-nlp/xp/internal/xio"
)

// Info describes this process's libtorch installation, for provenance
// records and `xp doctor`.
type Info struct {
	GoVersion      string
	GotchVersion   string
	TorchVersion   string // of the headers libxptorch was built against
	TorchPackage   string // Debian package owning the library, if any
	TorchLibrary   string // libtorch_cpu actually loaded
	BindingLibrary string // libxptorch.so actually loaded
	// BindingLinked is the libxptorch.so this binary was built against,
	// where another is loaded (a GPU node's own build, docs/build.md):
	// then TorchPackage is not claimed, and Stubbed is the loaded
	// library's count from the manifest.json torchbuild wrote beside it
	// (-1 where there is none).
	BindingLinked string
	BLAS          string // BLAS libraries mapped into the process, and libtorch's own BLAS_INFO
	CUDALinked    bool
	CUDAAvailable bool
	CUDADevices   int
	Threads       int
	CPUs          int
	Stubbed       int
	Config        string // at::show_config()
	// WaitPolicy is OMP_WAIT_POLICY as this process started with it
	// (libgomp reads it at load): xp runs passive unless told otherwise.
	WaitPolicy string
}

// Torch describes the libtorch xp runs on: its version and, for Debian's,
// the package (Debian's 1.13.1 ships headers that say 1.13.0; the
// package knows better).
func (in Info) Torch() string {
	torch := in.TorchVersion
	if in.TorchPackage != "" {
		torch += " (Debian package " + in.TorchPackage + ")"
		if v := upstreamVersion(in.TorchPackage); v != "" && v != in.TorchVersion {
			torch = v + " (Debian package " + in.TorchPackage + "; its headers say " + in.TorchVersion + ")"
		}
	}
	return torch
}

// Collect gathers Info from the running process.
func Collect() Info {
	b := Build()
	files := mappedFiles()
	in := Info{
		GoVersion:      runtime.Version(),
		GotchVersion:   b.GotchVersion + " (patched by xp's torchbuild)",
		TorchVersion:   lib.XpTorchVersion(),
		TorchPackage:   b.TorchPackage,
		TorchLibrary:   lib.XpTorchLibrary(),
		BindingLibrary: b.LibPath,
		CUDALinked:     b.CUDA || mappedLibrary(files, "libtorch_cuda.so") != "", // a GPU node's own libxptorch.so (docs/build.md)
		CUDAAvailable:  CUDAAvailable(),
		Threads:        Threads(),
		CPUs:           runtime.NumCPU(),
		Stubbed:        len(b.Stubbed),
		Config:         lib.XpTorchConfig(),
		WaitPolicy:     os.Getenv("OMP_WAIT_POLICY"),
	}
	if loaded := mappedLibrary(files, "libxptorch.so"); loaded != "" && !samePath(loaded, b.LibPath) {
		in.BindingLibrary, in.BindingLinked, in.TorchPackage = loaded, b.LibPath, ""
		in.Stubbed = manifestStubs(loaded)
	}
	_ = Err() // the calls above leave no error on success; clear any anyway
	if in.CUDAAvailable {
		in.CUDADevices = CUDADeviceCount()
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/sugarme/gotch" && d.Replace != nil {
				// The patched copy's folder within the clone (build/gotch),
				// not this machine's path to it: records carry this.
				in.GotchVersion = d.Version + " (replaced by " + filepath.Join(filepath.Base(filepath.Dir(d.Replace.Path)), filepath.Base(d.Replace.Path)) + ")"
			}
		}
	}
	in.BLAS = blasDescription(in.Config, files)
	return in
}

// mappedFiles lists the files mapped into this process, each once, in
// the order /proc/self/maps first names them (none where it cannot be
// read).
func mappedFiles() []string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil
	}
	defer f.Close()
	var files []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 6 && !seen[fields[len(fields)-1]] {
			seen[fields[len(fields)-1]] = true
			files = append(files, fields[len(fields)-1])
		}
	}
	return files
}

// mappedLibrary is the first of the mapped files whose name begins with
// prefix, or "".
func mappedLibrary(files []string, prefix string) string {
	for _, p := range files {
		if strings.HasPrefix(filepath.Base(p), prefix) {
			return p
		}
	}
	return ""
}

// manifestStubs is the number of stubbed bindings in the manifest.json
// torchbuild wrote beside the library lib, or -1.
func manifestStubs(lib string) int {
	b, err := xio.ReadFileMax(filepath.Join(filepath.Dir(lib), "manifest.json"), xio.MaxRecord)
	if err != nil {
		return -1
	}
	var m struct {
		Stubbed *[]string `json:"stubbed"`
	}
	if json.Unmarshal(b, &m) != nil || m.Stubbed == nil {
		return -1
	}
	return len(*m.Stubbed)
}

// samePath reports whether a and b name the same file.
func samePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(sa, sb)
}

var blasInfoRE = regexp.MustCompile(`BLAS_INFO=([^,\s]+)`)

// blasDescription names the BLAS libraries mapped into this process (the
// one that really runs, e.g. the libblas.so.3 that Debian's alternatives
// select) and libtorch's compiled-in BLAS_INFO.
func blasDescription(config string, files []string) string {
	var mapped []string
	for _, p := range files {
		base := strings.ToLower(filepath.Base(p))
		if strings.Contains(base, "blas") || strings.Contains(base, "mkl") || strings.Contains(base, "lapack") {
			real := p
			if r, err := filepath.EvalSymlinks(p); err == nil {
				real = r
			}
			mapped = append(mapped, real)
		}
	}
	sort.Strings(mapped)
	info := ""
	if m := blasInfoRE.FindStringSubmatch(config); m != nil {
		info = m[1]
	}
	switch {
	case len(mapped) == 0 && info == "":
		return "unknown"
	case len(mapped) == 0:
		return "BLAS_INFO=" + info + " (no BLAS library mapped yet)"
	}
	return strings.Join(mapped, ", ") + " (libtorch BLAS_INFO=" + info + ")"
}

// Write prints in as aligned "key: value" lines.
func (in Info) Write(w io.Writer) error {
	torch := in.Torch()
	cuda := "no"
	if in.CUDAAvailable {
		cuda = fmt.Sprintf("yes, %d device(s)", in.CUDADevices)
	}
	link := "CPU only"
	if in.CUDALinked {
		link = "CUDA"
	}
	stubbed := fmt.Sprintf("%d (not compilable against this libtorch; calling one returns an error)", in.Stubbed)
	switch {
	case in.BindingLinked != "" && in.Stubbed >= 0:
		stubbed = fmt.Sprintf("%d (from the manifest.json beside the binding library; calling one returns an error)", in.Stubbed)
	case in.BindingLinked != "":
		stubbed = "unknown (no manifest.json beside the binding library; calling a stub returns an error)"
	}
	rows := [][2]string{
		{"go", in.GoVersion},
		{"gotch", in.GotchVersion},
		{"libtorch", torch},
		{"libtorch library", in.TorchLibrary},
		{"binding library", in.BindingLibrary},
		{"bindings stubbed", stubbed},
		{"build", link},
		{"BLAS", in.BLAS},
		{"CUDA available", cuda},
		{"threads", fmt.Sprintf("%d intra-op (of %d CPUs)", in.Threads, in.CPUs)},
		{"OpenMP wait", cmp.Or(in.WaitPolicy, "libgomp's default (spinning)")},
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%-17s %s\n", r[0]+":", r[1]); err != nil {
			return err
		}
	}
	return nil
}

// upstreamVersion extracts "1.13.1" from "libtorch1.13 1.13.1+dfsg-4".
func upstreamVersion(pkg string) string {
	_, v, ok := strings.Cut(pkg, " ")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(v, ":"); i >= 0 {
		v = v[i+1:]
	}
	if i := strings.IndexAny(v, "+-~"); i >= 0 {
		v = v[:i]
	}
	return v
}
