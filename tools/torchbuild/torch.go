package main

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Torch describes one libtorch installation: where its headers and
// libraries are and what it was built as.
type Torch struct {
	Root        string   // LIBTORCH, or "" for a system install
	IncludeDirs []string // -I directories
	LibDir      string   // directory holding libtorch.so
	Version     string   // from torch/version.h, e.g. "1.13.0"
	Package     string   // Debian package and version owning the library, if any
	CUDA        bool     // link libtorch_cuda and libc10_cuda
	CXX11ABI    bool     // libc10 was built with _GLIBCXX_USE_CXX11_ABI=1
	LibStamp    string   // size and modification time of libtorch_cpu.so, for the cache key
}

// cudaMode is the user's choice: "auto" links CUDA when libtorch_cuda.so is
// present, "on" requires it, "off" never links it.
func findTorch(root, cudaMode string) (*Torch, error) {
	t := &Torch{Root: root}
	if root != "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		t.Root = abs
		t.IncludeDirs = []string{filepath.Join(abs, "include"), filepath.Join(abs, "include", "torch", "csrc", "api", "include")}
		t.LibDir = filepath.Join(abs, "lib")
	} else {
		inc, err := findSystemInclude()
		if err != nil {
			return nil, err
		}
		t.IncludeDirs = []string{inc, filepath.Join(inc, "torch", "csrc", "api", "include")}
		lib, err := findSystemLib("libtorch.so")
		if err != nil {
			return nil, err
		}
		t.LibDir = filepath.Dir(lib)
	}
	v, err := readTorchVersion(
		filepath.Join(t.IncludeDirs[1], "torch", "version.h"),
		// libtorch ≥ 2.9: torch/version.h includes this one
		filepath.Join(t.IncludeDirs[0], "torch", "headeronly", "version.h"))
	if err != nil {
		where := "LIBTORCH=" + t.Root
		if t.Root == "" {
			where = "the system libtorch (install Debian's libtorch-dev, or set LIBTORCH to an unpacked libtorch or to .../site-packages/torch)"
		}
		return nil, fmt.Errorf("libtorch headers not usable in %s: %w", where, err)
	}
	t.Version = v
	for _, lib := range []string{"libtorch.so", "libtorch_cpu.so", "libc10.so"} {
		if _, err := os.Stat(filepath.Join(t.LibDir, lib)); err != nil {
			return nil, fmt.Errorf("libtorch library missing: %w", err)
		}
	}
	st, _ := os.Stat(filepath.Join(t.LibDir, "libtorch_cpu.so"))
	t.LibStamp = fmt.Sprintf("%d-%d", st.Size(), st.ModTime().UnixNano())

	hasCUDA := fileExists(filepath.Join(t.LibDir, "libtorch_cuda.so"))
	switch cudaMode {
	case "", "auto":
		t.CUDA = hasCUDA
	case "on", "1", "true":
		if !hasCUDA {
			return nil, fmt.Errorf("XP_CUDA=on but %s has no libtorch_cuda.so: this libtorch is CPU-only", t.LibDir)
		}
		t.CUDA = true
	case "off", "0", "false":
		t.CUDA = false
	default:
		return nil, fmt.Errorf("XP_CUDA=%q: want auto, on or off", cudaMode)
	}

	abi, err := detectCXX11ABI(filepath.Join(t.LibDir, "libc10.so"))
	if err != nil {
		return nil, err
	}
	t.CXX11ABI = abi
	t.Package = debianPackage(filepath.Join(t.LibDir, "libtorch_cpu.so"))
	return t, nil
}

func findSystemInclude() (string, error) {
	for _, dir := range []string{"/usr/include", "/usr/local/include"} {
		if fileExists(filepath.Join(dir, "torch", "csrc", "api", "include", "torch", "version.h")) {
			return dir, nil
		}
	}
	return "", errors.New("no libtorch found: set LIBTORCH to a libtorch directory (with include/ and lib/) or install Debian's libtorch-dev (scripts/setup.sh does)")
}

// findSystemLib asks the C++ compiler where the linker would find name.
func findSystemLib(name string) (string, error) {
	out, err := exec.Command(cxx(), "-print-file-name="+name).Output()
	if err != nil {
		return "", fmt.Errorf("%s -print-file-name=%s: %w", cxx(), name, err)
	}
	p := strings.TrimSpace(string(out))
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("the linker finds no %s: install Debian's libtorch-dev or set LIBTORCH", name)
	}
	return p, nil
}

var versionRE = regexp.MustCompile(`#define\s+TORCH_VERSION_(MAJOR|MINOR|PATCH)\s+(\d+)`)

// readTorchVersion reads the version from the first of paths that
// defines it (older libtorch defines it in torch/version.h, newer in a
// header that one includes).
func readTorchVersion(paths ...string) (string, error) {
	var errs []error
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		parts := map[string]string{}
		for _, m := range versionRE.FindAllStringSubmatch(string(b), -1) {
			parts[m[1]] = m[2]
		}
		if len(parts) == 3 {
			return parts["MAJOR"] + "." + parts["MINOR"] + "." + parts["PATCH"], nil
		}
		errs = append(errs, fmt.Errorf("%s: no TORCH_VERSION_MAJOR/MINOR/PATCH", path))
	}
	return "", errors.Join(errs...)
}

// detectCXX11ABI reports whether lib was compiled with the C++11 string ABI:
// such libraries name std::__cxx11 types in their dynamic symbols. Official
// "cxx11 ABI" libtorch builds and Debian's do; pip wheels before 2.7 do not.
func detectCXX11ABI(lib string) (bool, error) {
	if v := os.Getenv("XP_TORCH_CXX11_ABI"); v != "" {
		return v == "1", nil
	}
	f, err := elf.Open(lib)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", lib, err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return false, fmt.Errorf("read symbols of %s: %w", lib, err)
	}
	for _, s := range syms {
		if strings.Contains(s.Name, "cxx11") {
			return true, nil
		}
	}
	return false, nil
}

// debianPackage names the Debian package and version that own path, or "".
func debianPackage(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	out, err := exec.Command("dpkg-query", "-S", real).Output()
	if err != nil {
		return ""
	}
	pkg := strings.TrimSpace(strings.SplitN(string(out), ":", 2)[0])
	if i := strings.IndexByte(pkg, ','); i >= 0 {
		pkg = pkg[:i]
	}
	ver, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return ""
	}
	return pkg + " " + strings.TrimSpace(string(ver))
}

func cxx() string {
	if c := os.Getenv("CXX"); c != "" {
		return c
	}
	return "g++"
}

func compilerVersion() (string, error) {
	out, err := exec.Command(cxx(), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("C++ compiler %q: %w (install g++, or set CXX)", cxx(), err)
	}
	first, _, _ := bufio.NewReader(strings.NewReader(string(out))).ReadLine()
	return string(first), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
