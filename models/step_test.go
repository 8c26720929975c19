package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/torchrt"
)

// TestStepForeach: the optimizer step a GPU takes (Adam's or AdamW's
// arithmetic over all parameters at once through multi-tensor ops;
// nn.Optimizer.XpStepForeach, forced here on the CPU) gives libtorch's
// own step's parameters bit for bit, step after step: with Adam's L2
// weight decay, AdamW's decoupled one and none, with a parameter that
// has no gradient at the first step (so that it runs a step behind the
// others), and across a saved state loaded into an optimizer that takes
// the other kind of step.
func TestStepForeach(t *testing.T) {
	shapes := [][]int64{{3, 4}, {7}, {1}, {5, 2}}
	r := rand.New(rand.NewPCG(4, 1))
	coefs := make([][]float32, len(shapes))
	for i, s := range shapes {
		n := int64(1)
		for _, d := range s {
			n *= d
		}
		for range n {
			coefs[i] = append(coefs[i], float32(r.NormFloat64()))
		}
	}
	configs := []struct {
		name string
		cfg  func() nn.OptimizerConfig
	}{
		{"adam", func() nn.OptimizerConfig { return nn.DefaultAdamConfig() }},
		{"adam-l2", func() nn.OptimizerConfig { return nn.NewAdamConfig(0.9, 0.999, 0.1) }},
		{"adamw", func() nn.OptimizerConfig { return nn.NewAdamWConfig(0.9, 0.98, 0.05) }},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			err := torchrt.Do(func() error {
				type model struct {
					vs  *nn.VarStore
					ws  []*ts.Tensor
					opt *nn.Optimizer
				}
				build := func() (*model, error) {
					torchrt.ManualSeed(5)
					m := &model{vs: nn.NewVarStore(gotch.CPU)}
					for i, s := range shapes {
						w, err := m.vs.Root().Randn(fmt.Sprintf("w%d", i), s, 0, 1)
						if err != nil {
							return nil, err
						}
						m.ws = append(m.ws, w)
					}
					var err error
					m.opt, err = c.cfg().Build(m.vs, 0.01)
					return m, err
				}
				// step: loss Σ_i Σ c_i·w_i² (gradient 2·c_i·w_i), w1 left
				// out at the first step; foreach picks the kind of step.
				step := func(m *model, k int, foreach bool) error {
					if err := m.opt.ZeroGrad(); err != nil {
						return err
					}
					var loss *ts.Tensor
					for i, w := range m.ws {
						if k == 0 && i == 1 {
							continue
						}
						ci, err := ts.NewTensorFromData(coefs[i], shapes[i])
						if err != nil {
							return err
						}
						sq, err := w.Mul(w, false)
						if err == nil {
							sq, err = sq.Mul(ci, true)
						}
						ci.Drop()
						if err == nil {
							sq, err = sq.Sum(gotch.Float, true)
						}
						if err != nil {
							return err
						}
						if loss == nil {
							loss = sq
						} else if loss, err = loss.Add(sq, true); err != nil {
							return err
						} else {
							sq.Drop()
						}
					}
					err := loss.Backward()
					loss.Drop()
					if err != nil {
						return err
					}
					if foreach {
						return m.opt.XpStepForeach()
					}
					return m.opt.Step()
				}
				values := func(m *model) ([][]float32, error) {
					var out [][]float32
					for _, w := range m.ws {
						n := w.Numel()
						v := make([]float32, n)
						if err := w.CopyData(v, n); err != nil {
							return nil, err
						}
						out = append(out, v)
					}
					return out, nil
				}
				same := func(what string, a, b *model) error {
					va, err := values(a)
					if err != nil {
						return err
					}
					vb, err := values(b)
					if err != nil {
						return err
					}
					for i := range va {
						for j := range va[i] {
							if math.Float32bits(va[i][j]) != math.Float32bits(vb[i][j]) {
								t.Errorf("%s: w%d[%d] = %v, libtorch's own step %v", what, i, j, vb[i][j], va[i][j])
								return nil
							}
						}
					}
					return nil
				}
				own, err := build()
				if err != nil {
					return err
				}
				defer own.opt.Drop()
				multi, err := build()
				if err != nil {
					return err
				}
				defer multi.opt.Drop()
				const half, steps = 3, 6
				for k := range half {
					if err := step(own, k, false); err != nil {
						return err
					}
					if err := step(multi, k, true); err != nil {
						return err
					}
					if err := same(fmt.Sprintf("step %d", k+1), own, multi); err != nil {
						return err
					}
				}
				// Each state, saved mid-training, goes on in an
				// optimizer that takes the other kind of step.
				resumed := func(from *model) (*model, error) {
					b, err := from.opt.XpState()
					if err != nil {
						return nil, err
					}
					path := filepath.Join(t.TempDir(), "opt.pt")
					if err := os.WriteFile(path, b, 0o644); err != nil {
						return nil, err
					}
					m, err := build()
					if err != nil {
						return nil, err
					}
					if err := m.vs.Copy(from.vs); err != nil {
						return nil, err
					}
					return m, m.opt.XpLoad(path)
				}
				ownThenMulti, err := resumed(own) // then multi-tensor steps
				if err != nil {
					return err
				}
				defer ownThenMulti.opt.Drop()
				multiThenOwn, err := resumed(multi) // then libtorch's
				if err != nil {
					return err
				}
				defer multiThenOwn.opt.Drop()
				for k := half; k < steps; k++ {
					for _, s := range []struct {
						m       *model
						foreach bool
					}{{own, false}, {multi, true}, {ownThenMulti, true}, {multiThenOwn, false}} {
						if err := step(s.m, k, s.foreach); err != nil {
							return err
						}
					}
					for _, o := range []struct {
						name string
						m    *model
					}{{"multi-tensor", multi}, {"libtorch's state, then multi-tensor", ownThenMulti}, {"multi-tensor state, then libtorch's", multiThenOwn}} {
						if err := same(fmt.Sprintf("%s, step %d", o.name, k+1), own, o.m); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
