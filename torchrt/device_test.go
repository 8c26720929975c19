package torchrt

import (
	"strings"
	"testing"

	"github.com/sugarme/gotch"
)

func TestParseDevice(t *testing.T) {
	cuda := CUDAAvailable()
	tests := []struct {
		spec    string
		want    string // DeviceString of the result; "" when an error is expected
		errPart string
	}{
		{"cpu", "cpu", ""},
		{" CPU ", "cpu", ""},
		{"auto", map[bool]string{true: "cuda:0", false: "cpu"}[cuda], ""},
		{"cuda", map[bool]string{true: "cuda:0", false: ""}[cuda], "CUDA is not available"},
		{"cuda:0", map[bool]string{true: "cuda:0", false: ""}[cuda], "CUDA is not available"},
		{"cuda:999", "", map[bool]string{true: "only", false: "CUDA is not available"}[cuda]},
		{"cuda:-1", "", "want cuda:N"},
		{"cuda:x", "", "want cuda:N"},
		{"gpu", "", "want cpu, cuda, cuda:N or auto"},
		{"", "", "want cpu, cuda, cuda:N or auto"},
	}
	for _, tt := range tests {
		d, err := ParseDevice(tt.spec)
		if tt.want == "" {
			if err == nil {
				t.Errorf("ParseDevice(%q) = %v, want an error", tt.spec, d)
			} else if !strings.Contains(err.Error(), tt.errPart) || !strings.Contains(err.Error(), tt.spec) {
				t.Errorf("ParseDevice(%q) error %q: want it to name the spec and say %q", tt.spec, err, tt.errPart)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDevice(%q): %v", tt.spec, err)
			continue
		}
		if got := DeviceString(d); got != tt.want {
			t.Errorf("ParseDevice(%q) = %s, want %s", tt.spec, got, tt.want)
		}
	}
}

func TestDeviceStringRoundTrip(t *testing.T) {
	for _, d := range []gotch.Device{gotch.CPU, gotch.CudaBuilder(0), gotch.CudaBuilder(3)} {
		s := DeviceString(d)
		if d.IsCuda() != strings.HasPrefix(s, "cuda:") {
			t.Errorf("DeviceString(%v) = %q", d, s)
		}
	}
}
