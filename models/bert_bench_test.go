package models

import (
	"cmp"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/hf"
	"github.com/xp-nlp/xp/internal/hftest"
	"github.com/xp-nlp/xp/torchrt"
)

// BenchmarkBertStepVsPyTorch times xp's BERT fine-tuning step (forward,
// cross-entropy, backward, clipping, AdamW) at batch 32 × 128 pieces
// against the same step in PyTorch (bench/pytorch_bert.py: the same
// architecture written with torch.nn), same shapes and threads, for a
// 4-layer 256-wide model and bert-base's shape (12 × 768, 30,522 pieces),
// random weights; and, as "dispatch", bert-base's depth 24 wide at 2 × 8
// pieces, where the arithmetic is negligible and the time is each side's
// cost of issuing its operators. Rounds alternate xp and PyTorch; the ratio of xp's
// examples/s to PyTorch's is reported as median (min, max). XP_THREADS
// sets both sides' threads (default: all cores), XP_REPEATS the rounds
// (default 3). XP_DEVICE=cuda runs both on the GPU (each side
// synchronising before it stops its clock) and XP_PRECISION=bf16 both
// under autocast in bfloat16 (xp's precision: bf16, PyTorch's
// torch.autocast). Needs python3 with torch (scripts/setup.sh pytorch):
//
//	make bench-bert
func BenchmarkBertStepVsPyTorch(b *testing.B) {
	python := torchPython()
	if python == "" {
		b.Skip("SKIP: no python3 with torch (XP_PYTHON, python3, /usr/bin/python3 tried; scripts/setup.sh pytorch installs Debian's python3-torch)")
	}
	threads, repeats := benchEnv()
	device := testDevice(b)
	precision := cmp.Or(os.Getenv("XP_PRECISION"), "fp32")
	for _, c := range []struct {
		name                                string
		vocab, hidden, layers, heads, inter int
		batch, length, steps                int
	}{
		{"4x256", 30522, 256, 4, 4, 1024, 32, 128, 6},
		{"bert-base", 30522, 768, 12, 12, 3072, 32, 128, 2},
		// bert-base's 12 layers and 201 parameters, 24 wide, 2 × 8 pieces:
		// almost no arithmetic, so a step's time is what each side spends
		// dispatching its operators — the part of a GPU step the host pays
		{"dispatch", 1000, 24, 12, 12, 24, 2, 8, 1000},
	} {
		batch, length := c.batch, c.length
		warm := 1
		if device.IsCuda() { // milliseconds a step: more steps, and warm-ups past cuBLAS's first calls
			warm = 3
			if c.steps < 100 {
				c.steps *= 25
			}
		}
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			if _, err := (hftest.Bert{VocabSize: c.vocab, Hidden: c.hidden, Layers: c.layers, Heads: c.heads, Intermediate: c.inter, MaxPositions: 512, Seed: 1}).Write(dir); err != nil {
				b.Fatal(err)
			}
			cfg, err := hf.ReadConfig(dir)
			if err != nil {
				b.Fatal(err)
			}
			if err := torchrt.SetThreads(threads); err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(2, 3))
			seqs := make([][]int64, batch)
			labels := make([]int64, batch)
			idx := make([]int, batch)
			for i := range seqs {
				seqs[i] = make([]int64, length)
				for j := range seqs[i] {
					seqs[i][j] = int64(5 + r.IntN(c.vocab-5))
				}
				labels[i], idx[i] = int64(r.IntN(2)), i
			}
			xpRound := func() float64 {
				var rate float64
				err := torchrt.Do(func() error {
					st, err := hf.OpenSafetensors(filepath.Join(dir, "model.safetensors"))
					if err != nil {
						return err
					}
					defer st.Close()
					torchrt.ManualSeed(1)
					m, _, err := NewBert(cfg, st, BertOptions{Classes: 2, Dropout: 0.1, LR: 2e-5, Clip: 1, Precision: precision}, device)
					if err != nil {
						return err
					}
					defer m.Close()
					bt, err := NewBatch(seqs, labels, idx, 0, 0, device)
					if err != nil {
						return err
					}
					defer bt.Drop()
					for w := 0; w < warm; w++ { // warm-up, untimed
						if _, err := m.Step(bt); err != nil {
							return err
						}
					}
					// Timed as Train steps on a GPU: each loss read after
					// the next step is queued (epochSteps), the last one
					// before the clock stops.
					start := time.Now()
					var pending *ts.Tensor
					for s := 0; s < c.steps; s++ {
						l, err := m.StepLoss(bt)
						if err != nil {
							return err
						}
						if pending != nil {
							if _, err := readLoss(pending, nil); err != nil {
								l.Drop()
								return err
							}
						}
						pending = l
					}
					if _, err := readLoss(pending, nil); err != nil {
						return err
					}
					rate = float64(c.steps*batch) / time.Since(start).Seconds()
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				return rate
			}
			torchRound := func() (float64, string) {
				cmd := exec.Command(python, "../bench/pytorch_bert.py", "--vocab", strconv.Itoa(c.vocab), "--hidden", strconv.Itoa(c.hidden),
					"--layers", strconv.Itoa(c.layers), "--heads", strconv.Itoa(c.heads), "--intermediate", strconv.Itoa(c.inter),
					"--batch", strconv.Itoa(batch), "--len", strconv.Itoa(length), "--steps", strconv.Itoa(c.steps), "--warmup", strconv.Itoa(warm), "--threads", strconv.Itoa(threads),
					"--device", torchrt.DeviceString(device), "--precision", precision)
				return runTwin(b, cmd)
			}
			var xps, pts, ratios []float64
			torch := ""
			for i := 0; i < repeats; i++ {
				xp := xpRound()
				pt, version := torchRound()
				torch = version
				xps, pts, ratios = append(xps, xp), append(pts, pt), append(ratios, xp/pt)
				b.Logf("%s round %d: xp %.2f, PyTorch %.2f examples/s (%.3f)", c.name, i+1, xp, pt, xp/pt)
			}
			med, lo, hi := medianRange(ratios)
			xm, _, _ := medianRange(xps)
			pm, _, _ := medianRange(pts)
			b.Logf("%s: batch %d × %d pieces on %s in %s, %d threads, %d rounds of %d steps: xp/PyTorch %s median %.3f (min %.3f, max %.3f); xp %.2f, PyTorch %.2f examples/s (medians)",
				c.name, batch, length, torchrt.DeviceString(device), precision, threads, repeats, c.steps, torch, med, lo, hi, xm, pm)
			b.ReportMetric(med, "xp/pytorch")
			b.ReportMetric(lo, "xp/pytorch-min")
			b.ReportMetric(hi, "xp/pytorch-max")
			b.ReportMetric(xm, "xp-ex/s")
		})
	}
}
