package torchrt

import (
	"errors"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// TestAutocast: a matrix product inside Autocast computes in bfloat16, one
// outside in float32, and the setting is off again after Autocast returns,
// also when f fails.
func TestAutocast(t *testing.T) {
	err := Do(func() error {
		var s Scope
		defer s.Drop()
		a, err := s.Keep(ts.Ones([]int64{4, 4}, gotch.Float, gotch.CPU))
		if err != nil {
			return err
		}
		kind := func() gotch.DType {
			p, err := s.Keep(a.Matmul(a, false))
			if err != nil {
				t.Fatal(err)
			}
			return p.DType()
		}
		if got := kind(); got != gotch.Float {
			t.Errorf("outside autocast: %v, want float32", got)
		}
		if err := Autocast(gotch.CPU, gotch.BFloat16, func() error {
			if !AutocastEnabled(gotch.CPU) {
				t.Error("AutocastEnabled is false inside Autocast")
			}
			if got := kind(); got != gotch.BFloat16 {
				t.Errorf("inside autocast: %v, want bfloat16", got)
			}
			return Autocast(gotch.CPU, gotch.BFloat16, func() error { return nil }) // nested: a no-op
		}); err != nil {
			return err
		}
		if AutocastEnabled(gotch.CPU) {
			t.Error("autocast still on after Autocast returned")
		}
		if got := kind(); got != gotch.Float {
			t.Errorf("after autocast: %v, want float32", got)
		}
		if err := Autocast(gotch.CPU, gotch.BFloat16, func() error { return errBoom }); err != errBoom {
			t.Errorf("f's error: got %v", err)
		}
		if AutocastEnabled(gotch.CPU) {
			t.Error("autocast still on after a failing f")
		}
		if err := Autocast(gotch.CPU, gotch.Float, func() error { return nil }); err == nil || !strings.Contains(err.Error(), "not a lower precision") {
			t.Errorf("float32 as autocast's dtype: got %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var errBoom = errors.New("boom")
