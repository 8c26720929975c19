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

	"github.com/xp-nlp/xp/hf"
	"github.com/xp-nlp/xp/internal/hftest"
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
						if loss, err = addTerm(loss, sq); err != nil {
							return err
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

// TestStepForeachDispatches: the multi-tensor step dispatches as many
// operators for 40 parameters as for 4 (what a GPU launches does not
// grow with the model), where libtorch's own step dispatches several
// per parameter. Counted on the second step (the first also makes the
// moments).
func TestStepForeachDispatches(t *testing.T) {
	count := func(params int, foreach bool) int64 {
		var n int64
		err := torchrt.Do(func() error {
			vs := nn.NewVarStore(gotch.CPU)
			var ws []*ts.Tensor
			for i := range params {
				w, err := vs.Root().Ones(fmt.Sprintf("w%03d", i), []int64{3})
				if err != nil {
					return err
				}
				ws = append(ws, w)
			}
			opt, err := nn.NewAdamWConfig(0.9, 0.999, 0).Build(vs, 0.01)
			if err != nil {
				return err
			}
			defer opt.Drop()
			for k := range 2 {
				if err := opt.ZeroGrad(); err != nil {
					return err
				}
				var loss *ts.Tensor
				for _, w := range ws {
					s, err := w.Sum(gotch.Float, false)
					if err != nil {
						return err
					}
					if loss, err = addTerm(loss, s); err != nil {
						return err
					}
				}
				err := loss.Backward()
				loss.Drop()
				if err != nil {
					return err
				}
				step := opt.Step
				if foreach {
					step = opt.XpStepForeach
				}
				if k == 0 {
					err = step()
				} else {
					n, err = ts.XpCountOps(step)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	own4, own40 := count(4, false), count(40, false)
	multi4, multi40 := count(4, true), count(40, true)
	t.Logf("operators an AdamW step dispatches: libtorch's %d (4 parameters), %d (40); multi-tensor %d, %d", own4, own40, multi4, multi40)
	if multi4 != multi40 || multi4 <= 0 || multi4 > 12 {
		t.Errorf("the multi-tensor step dispatched %d operators for 4 parameters and %d for 40: want the same few", multi4, multi40)
	}
	if own40-own4 < 7*36 {
		t.Errorf("libtorch's step dispatched %d operators for 4 parameters and %d for 40: the count does not see its per-parameter operators", own4, own40)
	}
}

// TestBertStepDispatches: the operators a BERT training step dispatches
// with bert-base's 201 parameters (12 layers, narrow), phase by phase,
// on the CPU's path (clipping on the host, libtorch's per-parameter
// AdamW) and on the GPU's (clipping on the device, the multi-tensor
// step, both forced here): on a GPU each is a kernel launch or a few.
// Counted on the second step. `go test ./models -run
// TestBertStepDispatches -v` prints the table docs/models.md shows.
func TestBertStepDispatches(t *testing.T) {
	dir, cfg, wp, _ := writeBert(t, hftest.Bert{Hidden: 16, Layers: 12, Heads: 2, Intermediate: 32, MaxPositions: 32, Seed: 4})
	data := sentimentPieces(t, wp, 4, 0)
	_, padPiece := wp.Special()
	pad, _ := wp.ID(padPiece)
	phases := []string{"forward and loss", "zero_grad", "backward", "clipping", "optimizer"}
	count := func(gpuPath bool) (params int, counts []int64) {
		err := torchrt.Do(func() error {
			st, err := hf.OpenSafetensors(filepath.Join(dir, "model.safetensors"))
			if err != nil {
				return err
			}
			defer st.Close()
			torchrt.ManualSeed(3)
			m, _, err := NewBert(cfg, st, BertOptions{Classes: 2, Dropout: 0.1, LR: 2e-5, Clip: 1}, gotch.CPU)
			if err != nil {
				return err
			}
			defer m.Close()
			params = len(m.p)
			b, err := data.batch([]int{0, 1, 2, 3}, true, TrainOptions{Classes: 2, Pad: int64(pad), Device: gotch.CPU})
			if err != nil {
				return err
			}
			defer b.Drop()
			var clipOpts []nn.ClipOpt
			step := m.adam.Step
			if gpuPath {
				clipOpts, step = []nn.ClipOpt{nn.XpOnDevice()}, m.adam.XpStepForeach
			}
			for range 2 {
				var loss *ts.Tensor
				run := []func() error{
					func() error {
						l, err := m.batchLogits(b, true)
						if err != nil {
							return err
						}
						defer l.Drop()
						loss, err = l.CrossEntropyLoss(b.Labels, ts.None, 1, -100, 0, false)
						return err
					},
					m.adam.ZeroGrad,
					func() error { return loss.Backward() },
					func() error { return m.adam.ClipGradNorm(1, clipOpts...) },
					step,
				}
				counts = counts[:0]
				for _, f := range run {
					n, err := ts.XpCountOps(f)
					if err != nil {
						return err
					}
					counts = append(counts, n)
				}
				loss.Drop()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return params, counts
	}
	params, cpu := count(false)
	_, gpu := count(true)
	var tcpu, tgpu int64
	t.Logf("operators a training step dispatches, %d parameters (batch 4):", params)
	t.Logf("| phase | CPU's path | GPU's path |")
	for i, p := range phases {
		t.Logf("| %s | %d | %d |", p, cpu[i], gpu[i])
		tcpu, tgpu = tcpu+cpu[i], tgpu+gpu[i]
	}
	t.Logf("| a step | %d | %d |", tcpu, tgpu)
	if params != 201 {
		t.Errorf("%d parameters, want bert-base's 201", params)
	}
	for i := range 3 {
		if cpu[i] != gpu[i] {
			t.Errorf("%s: %d operators on one path, %d on the other: the paths differ only in clipping and the optimizer", phases[i], cpu[i], gpu[i])
		}
	}
	if gpu[4] > 12 || cpu[4] < 7*int64(params) || gpu[3] >= cpu[3] {
		t.Errorf("clipping %d → %d, optimizer %d → %d operators: want the GPU's path to dispatch fewer, the optimizer a few", cpu[3], gpu[3], cpu[4], gpu[4])
	}
}
