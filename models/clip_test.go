package models

import (
	"math"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/torchrt"
)

// The patched gotch ClipGradNorm must return (upstream deadlocked) and
// leave the global gradient norm at the bound.
func TestClipGradNormBoundsGlobalNorm(t *testing.T) {
	err := torchrt.Do(func() error {
		vs := nn.NewVarStore(gotch.CPU)
		a, err := vs.Root().Ones("a", []int64{3})
		if err != nil {
			return err
		}
		b, err := vs.Root().Ones("b", []int64{4})
		if err != nil {
			return err
		}
		opt, err := nn.DefaultSGDConfig().Build(vs, 0.1)
		if err != nil {
			return err
		}
		// loss = 2·Σa + 3·Σb: gradients 2 (×3) and 3 (×4), norm √(12+36) = √48.
		two, three := ts.FloatScalar(2), ts.FloatScalar(3)
		defer two.Drop()
		defer three.Drop()
		la, _ := a.MulScalar(two, false)
		lb, _ := b.MulScalar(three, false)
		sa, _ := la.Sum(gotch.Float, true)
		sb, _ := lb.Sum(gotch.Float, true)
		loss, err := sa.Add(sb, true)
		if err != nil {
			return err
		}
		sb.Drop()
		if err := loss.Backward(); err != nil {
			return err
		}
		loss.Drop()
		if err := opt.ClipGradNorm(1.0); err != nil {
			return err
		}
		sq := 0.0
		for _, v := range []*ts.Tensor{a, b} {
			g, err := v.Grad(false)
			if err != nil {
				return err
			}
			n, _ := g.Size()
			for i := int64(0); i < n[0]; i++ {
				x, err := g.Float64Value([]int64{i})
				if err != nil {
					return err
				}
				sq += x * x
			}
			g.Drop()
		}
		if norm := math.Sqrt(sq); math.Abs(norm-1) > 1e-5 {
			t.Errorf("global gradient norm after clipping to 1: %v", norm)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
