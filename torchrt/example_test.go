package torchrt_test

import (
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/torchrt"
)

func ExampleParseDevice() {
	d, err := torchrt.ParseDevice("cpu")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(torchrt.DeviceString(d))
	_, err = torchrt.ParseDevice("tpu")
	fmt.Println(err)
	// Output:
	// cpu
	// device "tpu": want cpu, cuda, cuda:N or auto
}

// Tensor code runs inside Do, with libtorch seeded for reproducibility.
func ExampleDo() {
	err := torchrt.Do(func() error {
		torchrt.ManualSeed(42)
		x, err := ts.Ones([]int64{3}, gotch.Float, gotch.CPU)
		if err != nil {
			return err
		}
		defer x.Drop()
		s, err := x.Sum(gotch.Double, false)
		if err != nil {
			return err
		}
		defer s.Drop()
		v, err := s.Float64Value([]int64{})
		fmt.Println(v)
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: 3
}
