package torchrt

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strings"
)

// Machine names the class of CPU a number was computed on: its model name
// and the widest vector extension libtorch's kernels (and xp's own) pick
// on it ("AMD EPYC (x86-64, avx512_vnni)"). A trained model's float
// sums depend on it: records carry it so that a reader comparing two
// knows whether the same kernels ran.
func Machine() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	return machineOf(b, runtime.GOARCH)
}

// machineOf reads a /proc/cpuinfo's first processor.
func machineOf(cpuinfo []byte, arch string) string {
	var model string
	flags := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if model != "" {
				break // the first processor's block ends
			}
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			model = strings.Join(strings.Fields(v), " ")
		case "flags":
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
		}
	}
	isa := arch
	for _, f := range []string{"avx512_vnni", "avx512f", "avx2"} {
		if flags[f] {
			isa += ", " + f
			break
		}
	}
	if model == "" {
		return isa
	}
	return model + " (" + isa + ")"
}
