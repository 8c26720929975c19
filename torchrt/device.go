package torchrt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sugarme/gotch"
	lib "github.com/sugarme/gotch/libtch"
)

// ParseDevice turns a config string into a gotch device: "cpu", "cuda"
// (the first GPU), "cuda:N", or "auto" (the first GPU when CUDA is usable,
// else the CPU). A GPU that is not there is an error, not a silent fallback.
func ParseDevice(spec string) (gotch.Device, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	switch {
	case s == "cpu":
		return gotch.CPU, nil
	case s == "auto":
		if CUDAAvailable() {
			return gotch.CudaBuilder(0), nil
		}
		return gotch.CPU, nil
	case s == "cuda" || strings.HasPrefix(s, "cuda:"):
		idx := 0
		if rest, ok := strings.CutPrefix(s, "cuda:"); ok {
			n, err := strconv.Atoi(rest)
			if err != nil || n < 0 {
				return gotch.Device{}, fmt.Errorf("device %q: want cuda:N with N a GPU index", spec)
			}
			idx = n
		}
		if !CUDAAvailable() {
			return gotch.Device{}, fmt.Errorf("device %q: CUDA is not available (libtorch %s, %s); use cpu or auto", spec, Build().TorchVersion, linkWord())
		}
		if n := CUDADeviceCount(); idx >= n {
			return gotch.Device{}, fmt.Errorf("device %q: only %d CUDA device(s)", spec, n)
		}
		return gotch.CudaBuilder(uint(idx)), nil
	}
	return gotch.Device{}, fmt.Errorf("device %q: want cpu, cuda, cuda:N or auto", spec)
}

// DeviceString is the inverse of ParseDevice: "cpu" or "cuda:N".
func DeviceString(d gotch.Device) string {
	if d.IsCuda() {
		return fmt.Sprintf("cuda:%d", d.Value)
	}
	return "cpu"
}

// CUDAAvailable reports whether libtorch can use a GPU in this process.
func CUDAAvailable() bool { return lib.AtcCudaIsAvailable() }

// CUDADeviceCount is the number of GPUs libtorch sees.
func CUDADeviceCount() int { return int(lib.AtcCudaDeviceCount()) }

func linkWord() string {
	if Build().CUDA {
		return "linked with CUDA"
	}
	return "built for CPU only"
}
