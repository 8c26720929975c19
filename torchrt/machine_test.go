package torchrt

import "testing"

func TestMachineOf(t *testing.T) {
	for _, c := range []struct{ cpuinfo, want string }{
		{"processor\t: 0\nmodel name\t: AMD EPYC  7B13\nflags\t\t: fpu sse avx2 avx512f avx512_vnni\n\nprocessor\t: 1\nmodel name\t: other\n", "AMD EPYC 7B13 (amd64, avx512_vnni)"},
		{"model name\t: AMD EPYC 7702\nflags\t: fpu avx avx2 fma\n", "AMD EPYC 7702 (amd64, avx2)"},
		{"model name\t: Intel(R) Xeon(R) CPU\nflags\t: fpu avx avx512f\n", "Intel(R) Xeon(R) CPU (amd64, avx512f)"},
		{"flags\t: fpu\n", "amd64"},
		{"", "amd64"},
	} {
		if got := machineOf([]byte(c.cpuinfo), "amd64"); got != c.want {
			t.Errorf("machineOf(%q) = %q, want %q", c.cpuinfo, got, c.want)
		}
	}
}
