package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

// addTerm adds term to loss (nil: term is the loss) and drops term.
func addTerm(loss, term *ts.Tensor) (*ts.Tensor, error) {
	if loss == nil {
		return term, nil
	}
	defer term.Drop()
	return loss.Add(term, true)
}

// TestClipOnDevice: ClipGradNorm as it runs on a GPU (each gradient's
// norm in one multi-tensor op, the total, the coefficient and its clamp
// computed on the device, nothing read back; forced here with
// nn.XpOnDevice) gives the host
// computation's gradients: each scaled by min(bound / (norm + 1e-6), 1)
// for the 2-norm and the infinity norm, clipping or not. The gradients
// are known: loss = Σ c·w has gradient c.
func TestClipOnDevice(t *testing.T) {
	sizes := []int64{3, 7, 1, 40}
	r := rand.New(rand.NewPCG(2, 9))
	cs := make([][]float32, len(sizes))
	for i, n := range sizes {
		for range n {
			cs[i] = append(cs[i], float32(r.NormFloat64()))
		}
	}
	dev := testDevice(t)
	clipped := func(bound float64, opts ...nn.ClipOpt) ([][]float32, error) {
		var out [][]float32
		err := torchrt.Do(func() error {
			vs := nn.NewVarStore(dev)
			var ws []*ts.Tensor
			for i, n := range sizes {
				w, err := vs.Root().Ones(fmt.Sprintf("w%d", i), []int64{n})
				if err != nil {
					return err
				}
				ws = append(ws, w)
			}
			opt, err := nn.DefaultSGDConfig().Build(vs, 0.1)
			if err != nil {
				return err
			}
			defer opt.Drop()
			var loss *ts.Tensor
			for i, w := range ws {
				c, err := ts.NewTensorFromData(cs[i], []int64{sizes[i]})
				if err != nil {
					return err
				}
				cd, err := c.To(dev, true)
				if err != nil {
					return err
				}
				term, err := w.Mul(cd, false)
				cd.Drop()
				if err != nil {
					return err
				}
				s, err := term.Sum(gotch.Float, true)
				if err != nil {
					return err
				}
				if loss, err = addTerm(loss, s); err != nil {
					return err
				}
			}
			if err := loss.Backward(); err != nil {
				return err
			}
			loss.Drop()
			if err := opt.ClipGradNorm(bound, opts...); err != nil {
				return err
			}
			for i, w := range ws {
				g, err := w.Grad(false)
				if err != nil {
					return err
				}
				v := make([]float32, sizes[i])
				err = g.CopyData(v, uint(sizes[i]))
				g.Drop()
				if err != nil {
					return err
				}
				out = append(out, v)
			}
			return nil
		})
		return out, err
	}
	for _, inf := range []bool{false, true} {
		norm, opts := 0.0, []nn.ClipOpt{}
		for _, c := range cs {
			for _, x := range c {
				if inf {
					norm = math.Max(norm, math.Abs(float64(x)))
				} else {
					norm += float64(x) * float64(x)
				}
			}
		}
		if inf {
			opts = append(opts, nn.WithNormType(math.Inf(1)))
		} else {
			norm = math.Sqrt(norm)
		}
		for _, bound := range []float64{norm / 3, norm * 2} {
			coef := math.Min(bound/(norm+1e-6), 1)
			for _, onDevice := range []bool{false, true} {
				o := opts
				if onDevice {
					o = append(slices.Clone(opts), nn.XpOnDevice())
				}
				got, err := clipped(bound, o...)
				if err != nil {
					t.Fatalf("inf %v, bound %v, on device %v: %v", inf, bound, onDevice, err)
				}
				for i := range cs {
					for j, c := range cs[i] {
						want := float64(c) * coef
						if d := math.Abs(float64(got[i][j]) - want); d > 1e-6*math.Abs(want)+1e-9 {
							t.Errorf("inf %v, bound %.3g, on device %v: w%d[%d] %v, want %v", inf, bound, onDevice, i, j, got[i][j], want)
						}
					}
				}
			}
		}
	}
}
