package torchrt

import (
	"fmt"

	"github.com/sugarme/gotch"
	lib "github.com/sugarme/gotch/libtch"
)

// Autocast runs f under automatic mixed precision on device's type, as
// PyTorch's torch.autocast does: libtorch's eligible ops (linear layers,
// matrix products) compute in dtype (gotch.BFloat16 or gotch.Half) while
// the rest (layer norms, softmax, losses) stay float32, and weights stay
// float32. The setting is the calling OS thread's: call Autocast inside
// Do. Inside an enclosing Autocast it simply runs f. Autocast is turned
// off, and its cache of cast weights cleared, before it returns, so that
// a backward pass and an optimizer step after it run as PyTorch's do
// (outside the autocast region).
func Autocast(device gotch.Device, dtype gotch.DType, f func() error) (err error) {
	if dtype != gotch.BFloat16 && dtype != gotch.Half {
		return fmt.Errorf("autocast: %v is not a lower precision (bfloat16 or float16)", dtype)
	}
	cuda := device.IsCuda()
	if lib.XpAutocastEnabled(cuda) {
		return f()
	}
	lib.XpAutocast(cuda, true, int(dtype.CInt()))
	if err := Err(); err != nil {
		return fmt.Errorf("autocast on %s: %w", DeviceString(device), err)
	}
	defer func() {
		lib.XpAutocast(cuda, false, 0)
		if e := Err(); e != nil && err == nil {
			err = fmt.Errorf("autocast off on %s: %w", DeviceString(device), e)
		}
	}()
	return f()
}

// AutocastEnabled reports whether autocast is on for device's type on the
// calling OS thread.
func AutocastEnabled(device gotch.Device) bool { return lib.XpAutocastEnabled(device.IsCuda()) }
