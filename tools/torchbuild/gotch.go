package main

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed overlay
var overlay embed.FS

// edit is an exact textual replacement in one gotch file. want is how many
// times old must occur (0: at least once); a mismatch stops the build, since
// it means the pinned gotch source is not what the patch was written for.
type edit struct {
	old, new  string
	want      int
	wholeFunc bool // replace the top-level function whose signature starts new (old unused)
}

const mallocZero = "(*lib.Ctensor)(unsafe.Pointer(C.malloc(0)))"

// gotchEdits are xp's fixes to gotch v0.9.1's Go half.
func gotchEdits(clip string) map[string][]edit {
	leak := edit{old: mallocZero, new: "lib.NewOutBuf()"}
	return map[string][]edit{
		// Every generated op leaked its C.malloc(0) output slot.
		"ts/tensor-generated.go": {leak, {old: "ts.ctensor = *ptr\n", new: "ts.xpSetCtensor(*ptr)\n"}},
		"ts/patch.go":            {leak},
		// DataCheck (CopyData's, DataDim's) reflected on every element.
		"ts/util.go": {{
			old:  "func dataCheck(data interface{}, count int) (dtype gotch.DType, n int, err error) {\n\tv := reflect.ValueOf(data)\n",
			new:  "func dataCheck(data interface{}, count int) (dtype gotch.DType, n int, err error) {\n\tif l, dt, _, ok := xpFlatSlice(data); ok { // xp: a flat slice, counted directly\n\t\treturn dt, count + l, nil\n\t}\n\tv := reflect.ValueOf(data)\n",
			want: 1,
		}},
		"ts/tensor.go": {leak, {
			// Every tensor carried a zeroed 100 KB Go allocation, so that
			// Go's garbage collector would run (and free forgotten tensors
			// through their finalizers) as often as tensors are made: 15 µs
			// of each new tensor's 18 (a 4 × 4 add, CPU). xp frees every
			// tensor it makes (torchrt.Scope; TestStepFreesTensors,
			// TestSearchFreesTensors) and never leaves one to a finalizer,
			// which does not see device memory anyway.
			old:  "\tx.d = new(bigStruct)\n",
			new:  "",
			want: 1,
		}, {
			// Tensors from flat number slices without reflecting on
			// every element (overlay/ts_xp_patch.go.in).
			old:  "\t// 1. Check whether data and shape match\n\telementNum, err := DataDim(data)\n",
			new:  "\tif t, ok, err := xpTensorFromFlat(data, shape, o.Name); ok { // xp: a flat slice, copied directly\n\t\treturn t, err\n\t}\n\n\t// 1. Check whether data and shape match\n\telementNum, err := DataDim(data)\n",
			want: 1,
		}, {
			// CleanUp, which every VarStore Save and Load calls, slept a
			// second between two garbage collections (time for forgotten
			// tensors' finalizers): a second of idle for each model saved
			// or read, each training state kept — 13 of the 15 s of a
			// sweep of seven cells on tiny data. xp frees its tensors
			// itself (above); the collections stay.
			old:  "\tsleepTime := time.Duration(1000) // 1 second\n",
			new:  "\tsleepTime := time.Duration(0) // xp: no sleep (see tools/torchbuild)\n",
			want: 1,
		}, {
			// A race-free count of live tensors, for leak tests.
			old:  "func CheckCMemLeak() string {\n",
			new:  "// LiveTensors is the number of tensors created and not yet freed.\nfunc LiveTensors() int {\n\tlock.Lock()\n\tdefer lock.Unlock()\n\treturn len(ExistingTensors)\n}\n\nfunc CheckCMemLeak() string {\n",
			want: 1,
		}},
		// Every libtorch error carried a 20-line Go stack trace in its
		// text (and libtorch's own backtrace, where it gives one): the
		// error is now one line, the rest kept apart (overlay's XpError).
		"ts/error.go": {
			{old: "\t\"fmt\"\n\t\"runtime/debug\"\n", new: "\t\"runtime/debug\"\n", want: 1},
			{
				old:  "\t\ttrace := string(debug.Stack())\n\t\treturn fmt.Errorf(\"Libtorch API Error: %v\\n%v\\n\", errStr, trace)\n",
				new:  "\t\treturn &XpError{Msg: errStr, Stack: string(debug.Stack())} // xp: one line (see tools/torchbuild)\n",
				want: 1,
			},
		},
		// ClipGradNorm deadlocked (see overlay/nn_clip.go.in).
		"nn/optimizer.go": {
			{old: "\t\"math\"\n\n\t\"github.com/sugarme/gotch/ts\"\n", new: "\t\"math\"\n\t\"sort\"\n\n\t\"github.com/sugarme/gotch\"\n\t\"github.com/sugarme/gotch/ts\"\n", want: 1},
			{new: clip, wholeFunc: true},
			// On a GPU the norm is computed where the gradients are (see
			// overlay/nn_xp_optimizer.go.in, xpClipOnDevice).
			{old: "type ClipOpts struct {\n", new: "type ClipOpts struct {\n\txpOnDevice bool // xp: the norm stays on the gradients' device (XpOnDevice)\n", want: 1},
			// On a GPU, Adam's step is taken over all parameters at once
			// (overlay/nn_xp_optimizer.go.in, xpStep).
			{old: "func (opt *Optimizer) Step() error {\n\terr := opt.opt.Step()\n", new: "func (opt *Optimizer) Step() error {\n\terr := opt.xpStep() // xp: multi-tensor on a GPU (see tools/torchbuild)\n", want: 1},
			// Parameters entered the optimizer in Go's map order, a new
			// order in each model: a saved optimizer state (Adam's moments,
			// matched to parameters by position) loaded into another
			// instance of the same model landed on the wrong parameters.
			{
				old:  "\tnames := make(map[string]struct{})\n\tfor name, v := range vs.vars {\n\t\tif v.Trainable {\n",
				new:  "\tnames := make(map[string]struct{})\n\torder := make([]string, 0, len(vs.vars))\n\tfor name := range vs.vars {\n\t\torder = append(order, name)\n\t}\n\tsort.Strings(order) // xp: a fixed order (see tools/torchbuild)\n\tfor _, name := range order {\n\t\tv := vs.vars[name]\n\t\tif v.Trainable {\n",
				want: 1,
			},
			{
				old:  "\t\tfor name, x := range trainables {\n\t\t\tif _, ok := opt.variablesInOptimizer[name]; !ok {\n",
				new:  "\t\tnames := make([]string, 0, len(trainables))\n\t\tfor name := range trainables {\n\t\t\tnames = append(names, name)\n\t\t}\n\t\tsort.Strings(names) // xp: a fixed order (see tools/torchbuild)\n\t\tfor _, name := range names {\n\t\t\tx := trainables[name]\n\t\t\tif _, ok := opt.variablesInOptimizer[name]; !ok {\n",
				want: 1,
			},
		},
		// AtGradSetEnabled read a Go int (8 bytes) from the address of a C
		// int (4 bytes): the previous grad mode it returns was garbage, so
		// code restoring it (no-grad prediction) left gradients disabled.
		"libtch/tensor.go": {{
			old:  "\tcbool := *(*C.int)(unsafe.Pointer(&b))\n\tcretVal := C.at_grad_set_enabled(cbool)\n\treturn *(*int)(unsafe.Pointer(&cretVal))\n",
			new:  "\treturn int(C.at_grad_set_enabled(C.int(b)))\n",
			want: 1,
		}},
		// The zero Device (a Go struct left unset) killed the process with
		// log.Fatal("Not reachable") on first use; it means the CPU.
		"device.go": {{old: "\tdefault:\n\t\tlog.Fatal(\"Not reachable\")\n\t\treturn 0\n", new: "\tdefault: // xp: the zero Device is the CPU\n\t\treturn -1\n", want: 1}},
		// Importing gotch must not kill the process when $HOME is read-only:
		// the cache directory is only used to download pretrained weights.
		"init.go": {{old: "\t\t\tlog.Fatal(err)\n", new: "\t\t\tlog.Printf(\"gotch: cannot create cache directory %s: %v\", CachedDir, err)\n", want: 1}},
	}
}

// replaceFunc replaces the top-level function whose first line starts as
// the first line of repl does, up to its closing brace at column 0.
func replaceFunc(src, repl, file string) (string, error) {
	sig, _, _ := strings.Cut(repl, "(max")
	start := strings.Index(src, "\n"+sig+"(")
	if start < 0 || strings.Count(src, "\n"+sig+"(") != 1 {
		return "", fmt.Errorf("patch %s: function %q not found exactly once", file, sig)
	}
	start++
	end := strings.Index(src[start:], "\n}\n")
	if end < 0 {
		return "", fmt.Errorf("patch %s: function %q has no closing brace", file, sig)
	}
	return src[:start] + repl + src[start+end+3:], nil
}

func applyEdits(src string, edits []edit, file string) (string, error) {
	for _, e := range edits {
		if e.wholeFunc {
			var err error
			if src, err = replaceFunc(src, e.new, file); err != nil {
				return "", err
			}
			continue
		}
		n := strings.Count(src, e.old)
		if n == 0 || (e.want > 0 && n != e.want) {
			return "", fmt.Errorf("patch %s: expected %s of %q, found %d (is this gotch v0.9.1?)", file, wantWord(e.want), e.old, n)
		}
		src = strings.ReplaceAll(src, e.old, e.new)
	}
	return src, nil
}

func wantWord(n int) string {
	if n == 0 {
		return "at least one occurrence"
	}
	return fmt.Sprintf("%d occurrences", n)
}

// skipInOverlay says which parts of the gotch module the patched copy leaves
// out: examples and the code generator (90 MB, unused), gotch's own tests,
// and the C++ sources, which libxptorch.so holds instead (cgo would
// otherwise compile them into the Go package).
func skipInOverlay(rel string, dir bool) bool {
	if dir {
		return rel == "example" || rel == "gen" || strings.HasPrefix(rel, ".")
	}
	base := filepath.Base(rel)
	switch {
	case strings.HasSuffix(base, "_test.go"):
		return true
	case strings.HasPrefix(rel, "libtch/"):
		return base != "torch_api.h" && base != "torch_api_generated.h" && !strings.HasSuffix(base, ".go")
	case strings.HasSuffix(base, ".go"), base == "go.mod", base == "go.sum", base == "LICENSE":
		return false
	}
	return true
}

// writeOverlay writes the patched copy of gotch to dst: the module's Go
// files with xp's edits, xp's added files and a lib.go that links
// libxptorch.so from m. Files already up to date are left alone and files
// no longer produced are removed.
func writeOverlay(src, dst string, m *Manifest) error {
	for _, p := range []string{m.LibPath, m.TorchLibDir} {
		if strings.ContainsAny(p, " \t\"'") {
			return fmt.Errorf("path %q contains spaces or quotes, which cgo flags cannot carry: move the checkout or libtorch", p)
		}
	}
	clip, err := overlay.ReadFile("overlay/nn_clip.go.in")
	if err != nil {
		return err
	}
	edits := gotchEdits(string(clip))
	files := map[string][]byte{}
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if rel == "." {
			return nil
		}
		if skipInOverlay(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if es, ok := edits[rel]; ok {
			patched, err := applyEdits(string(data), es, rel)
			if err != nil {
				return err
			}
			data = []byte(patched)
			delete(edits, rel)
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		return fmt.Errorf("read gotch at %s: %w", src, err)
	}
	for rel := range edits {
		return fmt.Errorf("patch %s: file not found in %s", rel, src)
	}
	for rel, name := range map[string]string{
		"libtch/xp_ext.go":   "overlay/libtch_xp_ext.go.in",
		"libtch/xp_ext.h":    "overlay/xp_ext.h",
		"ts/xp_patch.go":     "overlay/ts_xp_patch.go.in",
		"nn/xp_optimizer.go": "overlay/nn_xp_optimizer.go.in",
	} {
		data, err := overlay.ReadFile(name)
		if err != nil {
			return err
		}
		files[rel] = data
	}
	files["libtch/lib.go"] = []byte(libGo(m))
	files["libtch/xp_build.go"] = []byte(buildGo(m))

	for rel, data := range files {
		if err := writeIfChanged(filepath.Join(dst, rel), data); err != nil {
			return err
		}
	}
	// Remove what an earlier run wrote and this one did not.
	return filepath.WalkDir(dst, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dst, path)
		if _, ok := files[rel]; !ok {
			return os.Remove(path)
		}
		return nil
	})
}

// libGo is the cgo link line of the patched libtch package: libxptorch.so
// and libtorch, each with a run path so binaries find them without
// LD_LIBRARY_PATH. libxptorch.so is found first relative to the binary
// ($ORIGIN/../build/torch/<key>, for bin/xp in a clone), so that a copy of
// the clone runs on its own copy; then at its absolute path (test
// binaries, which go builds elsewhere).
func libGo(m *Manifest) string {
	libDir := filepath.Dir(m.LibPath)
	origin := ""
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, libDir); err == nil && !strings.HasPrefix(rel, "..") {
			origin = "-Wl,-rpath,$ORIGIN/../" + filepath.ToSlash(rel) + " "
		}
	}
	torchLib := "-L" + m.TorchLibDir
	if m.TorchRoot != "" {
		torchLib += " -Wl,-rpath," + m.TorchLibDir // system libraries need no run path
	}
	return fmt.Sprintf(`package libtch

// Generated by xp's tools/torchbuild for libtorch %s (%s). Do not edit: run make.

// #cgo CFLAGS: -I${SRCDIR}
// #cgo LDFLAGS: -L%s %s-Wl,-rpath,%s -lxptorch
// #cgo LDFLAGS: %s %s -lstdc++
import "C"
`, m.TorchVersion, strings.TrimPrefix(cudaWord(m.CUDA), ", "), libDir, origin, libDir, torchLib, strings.Join(m.LinkLibraries, " "))
}

// buildGo records the build in Go constants, for xp doctor and the tests.
func buildGo(m *Manifest) string {
	stubbed := append([]string(nil), m.Stubbed...)
	sort.Strings(stubbed)
	var b strings.Builder
	fmt.Fprintf(&b, "package libtch\n\n// Generated by xp's tools/torchbuild. Do not edit: run make.\n\n")
	fmt.Fprintf(&b, "// XpBuild describes the libxptorch.so this package links.\nvar XpBuild = struct {\n")
	fmt.Fprintf(&b, "\tKey, GotchVersion, TorchVersion, TorchPackage, TorchRoot, TorchLibDir, LibPath, Compiler string\n\tCUDA, CXX11ABI bool\n\tStubbed []string\n}{\n")
	fmt.Fprintf(&b, "\tKey: %q,\n\tGotchVersion: %q,\n\tTorchVersion: %q,\n\tTorchPackage: %q,\n\tTorchRoot: %q,\n\tTorchLibDir: %q,\n\tLibPath: %q,\n\tCompiler: %q,\n",
		m.Key, m.GotchVersion, m.TorchVersion, m.TorchPackage, m.TorchRoot, m.TorchLibDir, m.LibPath, m.Compiler)
	fmt.Fprintf(&b, "\tCUDA: %v,\n\tCXX11ABI: %v,\n\tStubbed: []string{\n", m.CUDA, m.CXX11ABI)
	for _, s := range stubbed {
		fmt.Fprintf(&b, "\t\t%q,\n", s)
	}
	b.WriteString("\t},\n}\n")
	return b.String()
}

// goWork is the workspace file that points the build at the patched copy.
func goWork(goVersion, gotchVersion, overlayRel string) string {
	return fmt.Sprintf("// Generated by xp's tools/torchbuild (make). Do not edit or commit.\ngo %s\n\nuse .\n\nreplace github.com/sugarme/gotch %s => %s\n", goVersion, gotchVersion, overlayRel)
}
