package models

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/hf"
	"github.com/xp-nlp/xp/internal/hftest"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/torchrt"
)

// refBert is an independent float64 BERT classifier over the tensors a
// checkpoint was written with (names as written: prefix and LayerNorm
// naming given), for one unpadded text: the published architecture,
// post-LN, exact GELU, tanh pooler over the first token.
type refBert struct {
	t             map[string]hf.Tensor32
	prefix        string
	gamma, beta   string
	hidden, heads int
	layers        int
	eps           float64
	// distil: DistilBERT's names (written out here, apart from the
	// model's), no token types, pre_classifier and ReLU for the pooler.
	distil bool
	// roberta: RoBERTa's positions (create_position_ids_from_input_ids:
	// the running count of non-padding ids, plus padding_idx, pad) and
	// its head, classifier.dense, tanh and classifier.out_proj.
	roberta bool
	pad     int
}

var distilNames = []string{
	"encoder.layer.", "transformer.layer.", "attention.self.query", "attention.q_lin", "attention.self.key", "attention.k_lin",
	"attention.self.value", "attention.v_lin", "attention.output.dense", "attention.out_lin", "attention.output.LayerNorm", "sa_layer_norm",
	"intermediate.dense", "ffn.lin1", "output.dense", "ffn.lin2", "output.LayerNorm", "output_layer_norm",
}

func (r refBert) get(name string) []float64 {
	n := name
	if r.distil {
		for i := 0; i < len(distilNames); i += 2 {
			if strings.Contains(n, distilNames[i]) {
				n = strings.Replace(n, distilNames[i], distilNames[i+1], 1)
			}
		}
		if n == "pooler.dense.weight" || n == "pooler.dense.bias" {
			n = "pre_classifier." + strings.TrimPrefix(n, "pooler.dense.")
		}
	}
	if r.roberta {
		switch n {
		case "pooler.dense.weight", "pooler.dense.bias":
			n = "classifier.dense." + strings.TrimPrefix(n, "pooler.dense.")
		case "classifier.weight", "classifier.bias":
			n = "classifier.out_proj." + strings.TrimPrefix(n, "classifier.")
		}
	}
	if !strings.HasPrefix(n, "classifier.") && !strings.HasPrefix(n, "pre_classifier.") {
		n = r.prefix + n
	}
	n = strings.Replace(strings.Replace(n, "LayerNorm.weight", "LayerNorm."+r.gamma, 1), "LayerNorm.bias", "LayerNorm."+r.beta, 1)
	t, ok := r.t[n]
	if !ok {
		panic("reference: no tensor " + n)
	}
	out := make([]float64, len(t.Data))
	for i, v := range t.Data {
		out[i] = float64(v)
	}
	return out
}

// linear is y = W x + b for W of out × in.
func linear(x []float64, w, b []float64) []float64 {
	out := make([]float64, len(b))
	in := len(x)
	for o := range out {
		s := b[o]
		for i := 0; i < in; i++ {
			s += w[o*in+i] * x[i]
		}
		out[o] = s
	}
	return out
}

func layerNorm(x, g, b []float64, eps float64) []float64 {
	var mean, v float64
	for _, a := range x {
		mean += a
	}
	mean /= float64(len(x))
	for _, a := range x {
		v += (a - mean) * (a - mean)
	}
	v /= float64(len(x))
	out := make([]float64, len(x))
	for i, a := range x {
		out[i] = (a-mean)/math.Sqrt(v+eps)*g[i] + b[i]
	}
	return out
}

func (r refBert) logits(ids, types []int) []float64 {
	D, H := r.hidden, r.heads
	dh := D / H
	T := len(ids)
	we, pe := r.get("embeddings.word_embeddings.weight"), r.get("embeddings.position_embeddings.weight")
	var te []float64
	if !r.distil {
		te = r.get("embeddings.token_type_embeddings.weight")
	}
	pos := make([]int, T) // BERT: 0…T−1
	for t := range pos {
		pos[t] = t
	}
	if r.roberta {
		count := 0
		for t, id := range ids {
			pos[t] = r.pad
			if id != r.pad {
				count++
				pos[t] = count + r.pad
			}
		}
	}
	x := make([][]float64, T)
	for t := range x {
		e := make([]float64, D)
		for d := range e {
			e[d] = we[ids[t]*D+d] + pe[pos[t]*D+d]
			if te != nil {
				e[d] += te[types[t]*D+d]
			}
		}
		x[t] = layerNorm(e, r.get("embeddings.LayerNorm.weight"), r.get("embeddings.LayerNorm.bias"), r.eps)
	}
	for l := 0; l < r.layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		proj := func(n string) [][]float64 {
			out := make([][]float64, T)
			for t := range x {
				out[t] = linear(x[t], r.get(p+"attention.self."+n+".weight"), r.get(p+"attention.self."+n+".bias"))
			}
			return out
		}
		q, k, v := proj("query"), proj("key"), proj("value")
		ctx := make([][]float64, T)
		for t := range ctx {
			ctx[t] = make([]float64, D)
		}
		for h := 0; h < H; h++ {
			for i := 0; i < T; i++ {
				scores := make([]float64, T)
				top := math.Inf(-1)
				for j := 0; j < T; j++ {
					var s float64
					for d := h * dh; d < (h+1)*dh; d++ {
						s += q[i][d] * k[j][d]
					}
					scores[j] = s / math.Sqrt(float64(dh))
					top = math.Max(top, scores[j])
				}
				var z float64
				for j := range scores {
					scores[j] = math.Exp(scores[j] - top)
					z += scores[j]
				}
				for j := range scores {
					for d := h * dh; d < (h+1)*dh; d++ {
						ctx[i][d] += scores[j] / z * v[j][d]
					}
				}
			}
		}
		for t := range x {
			a := linear(ctx[t], r.get(p+"attention.output.dense.weight"), r.get(p+"attention.output.dense.bias"))
			for d := range a {
				a[d] += x[t][d]
			}
			a = layerNorm(a, r.get(p+"attention.output.LayerNorm.weight"), r.get(p+"attention.output.LayerNorm.bias"), r.eps)
			h := linear(a, r.get(p+"intermediate.dense.weight"), r.get(p+"intermediate.dense.bias"))
			for i, z := range h {
				h[i] = 0.5 * z * (1 + math.Erf(z/math.Sqrt2))
			}
			o := linear(h, r.get(p+"output.dense.weight"), r.get(p+"output.dense.bias"))
			for d := range o {
				o[d] += a[d]
			}
			x[t] = layerNorm(o, r.get(p+"output.LayerNorm.weight"), r.get(p+"output.LayerNorm.bias"), r.eps)
		}
	}
	pooled := linear(x[0], r.get("pooler.dense.weight"), r.get("pooler.dense.bias"))
	for i, z := range pooled {
		if r.distil {
			pooled[i] = math.Max(0, z)
		} else {
			pooled[i] = math.Tanh(z)
		}
	}
	return linear(pooled, r.get("classifier.weight"), r.get("classifier.bias"))
}

// writeBert writes a tiny checkpoint into a fresh folder and reads its
// config and tokenizer.
func writeBert(t *testing.T, spec hftest.Bert) (dir string, cfg hf.Config, wp hf.Tokenizer, written map[string]hf.Tensor32) {
	t.Helper()
	dir = t.TempDir()
	written, err := spec.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = hf.ReadConfig(dir); err != nil {
		t.Fatal(err)
	}
	if wp, err = hf.ReadTokenizer(dir, cfg); err != nil {
		t.Fatal(err)
	}
	return dir, cfg, wp, written
}

// loadBert writes a tiny checkpoint and builds xp's model of it.
func loadBert(t *testing.T, spec hftest.Bert, classes int) (*Bert, BertLoad, hf.Tokenizer, map[string]hf.Tensor32, error) {
	t.Helper()
	return loadBertWith(t, spec, BertOptions{Classes: classes, Dropout: 0.1})
}

// testDevice is the device XP_DEVICE names (cpu when unset): the BERT
// tests run on a GPU with XP_DEVICE=cuda (bench/gpu_check.sh, step bert).
func testDevice(t testing.TB) gotch.Device {
	t.Helper()
	d, err := torchrt.ParseDevice(cmp.Or(os.Getenv("XP_DEVICE"), "cpu"))
	if err != nil {
		t.Fatalf("XP_DEVICE: %v", err)
	}
	return d
}

func loadBertWith(t *testing.T, spec hftest.Bert, o BertOptions) (*Bert, BertLoad, hf.Tokenizer, map[string]hf.Tensor32, error) {
	t.Helper()
	dir, cfg, wp, written := writeBert(t, spec)
	st, err := hf.OpenSafetensors(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var m *Bert
	var rep BertLoad
	err = torchrt.Do(func() error {
		torchrt.ManualSeed(1)
		var err error
		m, rep, err = NewBert(cfg, st, o, testDevice(t))
		return err
	})
	return m, rep, wp, written, err
}

// TestBertMatchesReference: xp's BERT gives the logits of an independent
// float64 implementation of the published architecture, to 1e-4, on a
// padded batch of a single text and a sentence pair (each row against
// the reference run on that row alone, unpadded: padding is masked), for
// a checkpoint with Hugging Face's parameter names and for one with the
// original gamma/beta names and a position_ids buffer.
func TestBertMatchesReference(t *testing.T) {
	for _, gb := range []bool{false, true} {
		t.Run(fmt.Sprintf("gamma/beta=%v", gb), func(t *testing.T) {
			spec := hftest.Bert{Hidden: 16, Layers: 2, Heads: 4, Intermediate: 32, MaxPositions: 32, Classes: 3, GammaBeta: gb, PositionIDs: gb, Seed: 5}
			m, rep, wp, written, err := loadBert(t, spec, 3)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if len(rep.Initialised) != 0 {
				t.Errorf("initialised %v: the checkpoint has every parameter", rep.Initialised)
			}
			if want := []string(nil); gb {
				if want = []string{"bert.embeddings.position_ids"}; !slices.Equal(rep.Unused, want) {
					t.Errorf("unused %v, want %v", rep.Unused, want)
				}
			} else if len(rep.Unused) != 0 {
				t.Errorf("unused %v", rep.Unused)
			}
			second := "a very good movie"
			idsA, typesA, _ := wp.Encode("The film was not good, awful!", nil, 32)
			idsB, typesB, _ := wp.Encode("great film", &second, 32)
			T := max(len(idsA), len(idsB))
			pad := func(ids, types []int) ([]int, []int, []int) {
				mask := make([]int, T)
				for i := range mask {
					mask[i] = b2i(i < len(ids))
				}
				return append(slices.Clone(ids), make([]int, T-len(ids))...), append(slices.Clone(types), make([]int, T-len(types))...), mask
			}
			var enc Encoded
			for _, r := range [][2][]int{{idsA, typesA}, {idsB, typesB}} {
				ids, types, mask := pad(r[0], r[1])
				enc.IDs, enc.Types, enc.Mask = append(enc.IDs, ids), append(enc.Types, types), append(enc.Mask, mask)
			}
			got, err := m.Logits(enc, false)
			if err != nil {
				t.Fatal(err)
			}
			g, b := "weight", "bias"
			if gb {
				g, b = "gamma", "beta"
			}
			ref := refBert{t: written, prefix: "bert.", gamma: g, beta: b, hidden: 16, heads: 4, layers: 2, eps: 1e-12}
			for row, r := range [][2][]int{{idsA, typesA}, {idsB, typesB}} {
				want := ref.logits(r[0], r[1])
				for c, w := range want {
					if d := math.Abs(float64(got[row*3+c]) - w); d > 1e-4*math.Max(1, math.Abs(w)) {
						t.Errorf("row %d class %d: %v, reference %v (|Δ| %.2g)", row, c, got[row*3+c], w, d)
					}
				}
			}
		})
	}
}

// TestBertBF16: with Precision bf16 the forward pass runs under autocast
// in bfloat16: its logits differ from float32's (autocast is on: a no-op
// would give them exactly) yet stay within bfloat16's rounding of the
// float64 reference; a training step in bf16 gives a finite loss and
// leaves autocast off on the thread, so what runs after it is float32.
func TestBertBF16(t *testing.T) {
	spec := hftest.Bert{Hidden: 16, Layers: 2, Heads: 4, Intermediate: 32, MaxPositions: 32, Classes: 2, Seed: 5}
	m32, _, wp, written, err := loadBertWith(t, spec, BertOptions{Classes: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m32.Close()
	m16, _, _, _, err := loadBertWith(t, spec, BertOptions{Classes: 2, LR: 1e-3, Clip: 1, Precision: "bf16"})
	if err != nil {
		t.Fatal(err)
	}
	defer m16.Close()
	ids, types, _ := wp.Encode("The film was not good, awful!", nil, 32)
	mask := make([]int, len(ids))
	for i := range mask {
		mask[i] = 1
	}
	enc := Encoded{IDs: [][]int{ids}, Types: [][]int{types}, Mask: [][]int{mask}}
	l32, err := m32.Logits(enc, false)
	if err != nil {
		t.Fatal(err)
	}
	l16, err := m16.Logits(enc, false)
	if err != nil {
		t.Fatal(err)
	}
	want := refBert{t: written, prefix: "bert.", gamma: "weight", beta: "bias", hidden: 16, heads: 4, layers: 2, eps: 1e-12}.logits(ids, types)
	if slices.Equal(l32, l16) {
		t.Errorf("bf16 logits %v equal float32's: autocast did not act", l16)
	}
	for c, w := range want {
		if d := math.Abs(float64(l16[c]) - w); d > 0.02 { // logits of about 0.1: bfloat16's 8 bits lose ~0.4% a rounding

			t.Errorf("class %d: bf16 %v, reference %v (|Δ| %.2g, float32 %v)", c, l16[c], w, d, l32[c])
		}
	}
	seq := pieceIDs(ids)
	err = torchrt.Do(func() error {
		b, err := NewBatch([][]int64{seq, seq}, []int64{0, 1}, []int{0, 1}, 0, 0, m16.device)
		if err != nil {
			return err
		}
		defer b.Drop()
		loss, err := m16.Step(b)
		if err != nil {
			return err
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) || loss <= 0 {
			t.Errorf("bf16 step: loss %v", loss)
		}
		if torchrt.AutocastEnabled(m16.device) {
			t.Error("autocast still on after a bf16 step")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := m32.Logits(enc, false); err != nil || !slices.Equal(again, l32) {
		t.Errorf("float32 logits after a bf16 step: %v (%v), before %v", again, err, l32)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBertHead: a plain encoder checkpoint (no head) gets a fresh head,
// reported; a head of another size is replaced by a fresh one.
func TestBertHead(t *testing.T) {
	m, rep, _, _, err := loadBert(t, hftest.Bert{Hidden: 8, Layers: 1, Heads: 2, Intermediate: 16, MaxPositions: 16, Seed: 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !slices.Equal(rep.Initialised, []string{"classifier.weight", "classifier.bias"}) || slices.Contains(rep.Loaded, "classifier.weight") || !slices.Contains(rep.Loaded, "pooler.dense.weight") {
		t.Errorf("a plain encoder: initialised %v, loaded %d", rep.Initialised, len(rep.Loaded))
	}
	m, rep, _, _, err = loadBert(t, hftest.Bert{Hidden: 8, Layers: 1, Heads: 2, Intermediate: 16, MaxPositions: 16, Classes: 3, Seed: 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !slices.Equal(rep.Initialised, []string{"classifier.weight", "classifier.bias"}) || !slices.Contains(rep.Unused, "classifier.weight") {
		t.Errorf("a 3-class head for 2 classes: initialised %v, unused %v", rep.Initialised, rep.Unused)
	}
}

// TestBertBadCheckpoint: a checkpoint that lacks encoder tensors, or
// holds them in other shapes, is refused in one line naming them.
func TestBertBadCheckpoint(t *testing.T) {
	dir := t.TempDir()
	spec := hftest.Bert{Hidden: 8, Layers: 1, Heads: 2, Intermediate: 16, MaxPositions: 16, Classes: 2, Seed: 1}
	written, err := spec.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	delete(written, "bert.encoder.layer.0.attention.self.key.weight")
	written["bert.encoder.layer.0.output.dense.bias"] = hf.Tensor32{Shape: []int64{4}, Data: make([]float32, 4)}
	var buf bytes.Buffer
	if err := hf.WriteSafetensors(&buf, written, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := hf.ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := hf.OpenSafetensors(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = torchrt.Do(func() error {
		_, _, err := NewBert(cfg, st, BertOptions{Classes: 2, Dropout: 0.1}, gotch.CPU)
		return err
	})
	want := "1 tensors missing (encoder.layer.0.attention.self.key.weight); 1 tensors of the wrong shape (bert.encoder.layer.0.output.dense.bias [4] (want [8]))"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v, want one line with %q", err, want)
	}
}

// pieceIDs are a tokenizer's ids as a model's sequence.
func pieceIDs(ids []int) []int64 {
	seq := make([]int64, len(ids))
	for i, id := range ids {
		seq[i] = int64(id)
	}
	return seq
}

// sentimentPieces is a separable task in the tiny vocabulary's pieces:
// [CLS] (the|a) (film|movie) (was|is) [very] WORD [SEP], labelled 1 for
// good and great, 0 for bad and awful.
func sentimentPieces(t *testing.T, wp hf.Tokenizer, n int, seed int) Data {
	t.Helper()
	var d Data
	words := []string{"good", "great", "bad", "awful"}
	for i := 0; i < n; i++ {
		k := (i*7 + seed) % 4
		text := []string{"the", "a"}[(i+seed)%2] + " " + []string{"film", "movie"}[(i/2)%2] + " " + []string{"was", "is"}[(i/3)%2]
		if i%5 == 0 {
			text += " very"
		}
		ids, _, _ := wp.Encode(text+" "+words[k], nil, 32)
		d.Seqs = append(d.Seqs, pieceIDs(ids))
		d.Labels = append(d.Labels, int64(b2i(k < 2)))
	}
	return d
}

// TestBertFineTunes: a tiny BERT fine-tuned with Train learns a
// separable task, and training stopped after an epoch and resumed from
// its checkpoint (AdamW's moments, the schedule's position, the
// generator's state) ends bit for bit as an uninterrupted run does.
func TestBertFineTunes(t *testing.T) {
	dir, cfg, wp, _ := writeBert(t, hftest.Bert{Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 32, Seed: 3})
	train, valid := sentimentPieces(t, wp, 96, 0), sentimentPieces(t, wp, 32, 1)
	_, padPiece := wp.Special()
	pad, _ := wp.ID(padPiece)
	run := func(ck string, stopAfter int) (TrainResult, metrics.Classification, error) {
		return fineTuneTiny(t, dir, cfg, train, valid, 0.1, TrainOptions{Epochs: 16, Batch: 16, Pad: int64(pad), Checkpoint: ck}, trainStopped, stopAfter)
	}
	whole, wholeAfter, err := run("", 0)
	if err != nil {
		t.Fatal(err)
	}
	if wholeAfter.Accuracy < 0.9 {
		t.Errorf("validation accuracy %.3f after fine-tuning on a separable task (history %+v)", wholeAfter.Accuracy, whole.Epochs)
	}
	ck := filepath.Join(t.TempDir(), "ck")
	if _, _, err := run(ck, 5); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	resumed, resumedAfter, err := run(ck, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameTraining(t, whole, resumed, wholeAfter, resumedAfter)
}

// TestBertWeightDecay: weight decay is AdamW's decoupled one, of every
// weight but the biases and layer norms: after one step at learning rate
// η with decay λ, a decayed parameter is the undecayed step's value minus
// η·λ times its value before the step, and every other one is exactly
// the undecayed step's. (Adam's update is the same in both: decoupled
// decay does not reach the gradients or the moments.)
func TestBertWeightDecay(t *testing.T) {
	dir, cfg, wp, _ := writeBert(t, hftest.Bert{Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 32, Seed: 3})
	data := sentimentPieces(t, wp, 8, 0)
	_, padPiece := wp.Special()
	pad, _ := wp.ID(padPiece)
	const lr, wd = 1e-2, 0.3
	values := func(m *Bert) (map[string][]float32, error) {
		out := map[string][]float32{}
		for name, p := range m.p {
			n := p.Numel()
			v := make([]float32, n)
			if err := p.CopyData(v, n); err != nil {
				return nil, err
			}
			out[name] = v
		}
		return out, nil
	}
	stepped := func(decay float64) (before, after map[string][]float32) {
		err := torchrt.Do(func() error {
			st, err := hf.OpenSafetensors(filepath.Join(dir, "model.safetensors"))
			if err != nil {
				return err
			}
			defer st.Close()
			torchrt.ManualSeed(11)
			m, _, err := NewBert(cfg, st, BertOptions{Classes: 2, LR: lr, WeightDecay: decay, Clip: 1}, testDevice(t))
			if err != nil {
				return err
			}
			defer m.Close()
			if before, err = values(m); err != nil {
				return err
			}
			b, err := data.batch([]int{0, 1, 2, 3, 4, 5, 6, 7}, true, TrainOptions{Classes: 2, Pad: int64(pad), Device: testDevice(t)})
			if err != nil {
				return err
			}
			defer b.Drop()
			if _, err := m.Step(b); err != nil {
				return err
			}
			after, err = values(m)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return before, after
	}
	before, plain := stepped(0)
	_, decayed := stepped(wd)
	var nd, nk int
	for name, p0 := range before {
		want := slices.Clone(plain[name])
		if decays(name) {
			nd++
			for i := range want {
				want[i] -= float32(lr * wd * float64(p0[i]))
			}
		} else {
			nk++
		}
		for i := range want {
			if d := math.Abs(float64(decayed[name][i] - want[i])); d > 1e-6+1e-5*math.Abs(float64(want[i])) {
				t.Errorf("%s[%d] = %v after a decayed step, want %v (undecayed %v, before %v; decayed: %v)", name, i, decayed[name][i], want[i], plain[name][i], p0[i], decays(name))
				break
			}
		}
	}
	if nd == 0 || nk == 0 {
		t.Errorf("%d parameters decayed, %d kept: the test needs both", nd, nk)
	}
	for _, c := range []struct {
		name string
		want bool
	}{{"encoder.layer.0.attention.output.LayerNorm.weight", false}, {"embeddings.LayerNorm.bias", false}, {"classifier.bias", false},
		{"classifier.weight", true}, {"embeddings.word_embeddings.weight", true}, {"encoder.layer.0.intermediate.dense.weight", true}} {
		if decays(c.name) != c.want {
			t.Errorf("decays(%s) = %v", c.name, !c.want)
		}
	}
}

func TestBertSchedule(t *testing.T) {
	o := BertOptions{LR: 1, Warmup: 0.2, TotalSteps: 10}
	var got []float64
	for s := 0; s < 10; s++ {
		got = append(got, math.Round(o.lr(s)*1000)/1000)
	}
	want := []float64{0, 0.5, 1, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("schedule %v, want %v", got, want)
	}
}

// TestBertPairBatch: sentence pairs packed as [CLS] a [SEP] b [SEP] with
// token types reach the model through Data.Types: a training batch of
// them (rows sorted by length, padded) gives each pair the logits the
// reference-checked Encoded path gives it, and without the types the
// logits differ (the types are read).
func TestBertPairBatch(t *testing.T) {
	m, _, wp, _, err := loadBert(t, hftest.Bert{Hidden: 16, Layers: 2, Heads: 4, Intermediate: 32, MaxPositions: 32, Classes: 2, Seed: 8}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	pairs := [][2]string{{"the film was good", "a great movie"}, {"bad", "the movie was not very good , awful !"}, {"great", "good"}}
	var d Data
	var enc []Encoded
	for _, p := range pairs {
		ids, types, _ := wp.Encode(p[0], &p[1], 32)
		seq, tt := make([]int64, len(ids)), make([]int64, len(ids))
		mask := make([]int, len(ids))
		for i := range ids {
			seq[i], tt[i], mask[i] = int64(ids[i]), int64(types[i]), 1
		}
		d.Seqs, d.Types, d.Labels = append(d.Seqs, seq), append(d.Types, tt), append(d.Labels, 0)
		enc = append(enc, Encoded{IDs: [][]int{ids}, Types: [][]int{types}, Mask: [][]int{mask}})
	}
	opt := TrainOptions{Classes: 2, Pad: 0, Device: testDevice(t)}
	logitsOf := func(d Data) [][]float32 {
		var out [][]float32
		err := torchrt.Do(func() error {
			b, err := d.batch([]int{0, 1, 2}, true, opt)
			if err != nil {
				return err
			}
			defer b.Drop()
			pass := func() ([]float32, error) {
				l, err := m.batchLogits(b, false)
				if err != nil {
					return nil, err
				}
				defer l.Drop()
				flat := make([]float32, 6)
				return flat, l.CopyData(flat, 6)
			}
			flat, err := pass()
			if err != nil {
				return err
			}
			// Again: the batch's attention mask is made once, kept,
			// and gives the same logits.
			mask := b.attention
			flat2, err := pass()
			if err != nil {
				return err
			}
			if mask == nil || b.attention != mask || !slices.Equal(flat, flat2) {
				t.Errorf("a batch's second pass: mask %p then %p, logits %v then %v", mask, b.attention, flat, flat2)
			}
			out = make([][]float32, 3)
			for r, o := range b.Order {
				out[o] = flat[2*r : 2*r+2]
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := logitsOf(d)
	for i, e := range enc {
		want, err := m.Logits(e, false)
		if err != nil {
			t.Fatal(err)
		}
		for c := range want {
			if math.Abs(float64(got[i][c]-want[c])) > 1e-5 {
				t.Errorf("pair %d class %d: batch %v, alone %v", i, c, got[i][c], want[c])
			}
		}
	}
	untyped := d
	untyped.Types = nil
	if reflect.DeepEqual(logitsOf(untyped), got) {
		t.Error("the same logits without token types: the types are not read")
	}
}

// TestDistilBertMatchesReference: a DistilBERT checkpoint (no token
// types, its own names, pre_classifier with ReLU before the classifier)
// gives the logits of the float64 reference run on the same tensors
// under its names, to 1e-4.
func TestDistilBertMatchesReference(t *testing.T) {
	spec := hftest.Bert{Hidden: 16, Layers: 2, Heads: 4, Intermediate: 32, MaxPositions: 32, Classes: 2, DistilBERT: true, Seed: 6}
	m, rep, wp, written, err := loadBert(t, spec, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(rep.Initialised)+len(rep.Unused) != 0 {
		t.Errorf("initialised %v, unused %v", rep.Initialised, rep.Unused)
	}
	ids, types, _ := wp.Encode("The film was not good, awful!", nil, 32)
	mask := make([]int, len(ids))
	for i := range mask {
		mask[i] = 1
	}
	got, err := m.Logits(Encoded{IDs: [][]int{ids}, Types: [][]int{types}, Mask: [][]int{mask}}, false)
	if err != nil {
		t.Fatal(err)
	}
	ref := refBert{t: written, prefix: "distilbert.", gamma: "weight", beta: "bias", hidden: 16, heads: 4, layers: 2, eps: 1e-12, distil: true}
	want := ref.logits(ids, types)
	for c, w := range want {
		if d := math.Abs(float64(got[c]) - w); d > 1e-4*math.Max(1, math.Abs(w)) {
			t.Errorf("class %d: %v, reference %v", c, got[c], w)
		}
	}
}

// TestRobertaMatchesReference: a RoBERTa checkpoint (the "roberta."
// prefix, one token type, positions counted from padding_idx + 1, its
// classification head's dense layer and out_proj), tokenized by its
// byte-level BPE, gives the logits of the float64 reference to 1e-4 —
// a row padded after its pieces too, as the attention mask keeps it.
func TestRobertaMatchesReference(t *testing.T) {
	spec := hftest.Bert{Hidden: 16, Layers: 2, Heads: 4, Intermediate: 32, MaxPositions: 34, Classes: 2, RoBERTa: true, Seed: 8}
	m, rep, tok, written, err := loadBert(t, spec, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(rep.Initialised)+len(rep.Unused) != 0 {
		t.Errorf("initialised %v, unused %v", rep.Initialised, rep.Unused)
	}
	a, _, _ := tok.Encode("The film was not good, awful!", nil, 32)
	b, _, _ := tok.Encode("a bad film", nil, 32)
	if good, _ := tok.ID("Ġgood"); !slices.Contains(a, good) {
		t.Fatalf("%v: \" good\" is not one piece (the merges did not apply)", a)
	}
	_, padPiece := tok.Special()
	pad, _ := tok.ID(padPiece)
	row := func(ids []int, n int) (out, types, mask []int) {
		for i := 0; i < n; i++ {
			if i < len(ids) {
				out, mask = append(out, ids[i]), append(mask, 1)
			} else {
				out, mask = append(out, pad), append(mask, 0)
			}
			types = append(types, 0)
		}
		return out, types, mask
	}
	ia, ta, ma := row(a, len(a))
	ib, tb, mb := row(b, len(a))
	got, err := m.Logits(Encoded{IDs: [][]int{ia, ib}, Types: [][]int{ta, tb}, Mask: [][]int{ma, mb}}, false)
	if err != nil {
		t.Fatal(err)
	}
	ref := refBert{t: written, prefix: "roberta.", gamma: "weight", beta: "bias", hidden: 16, heads: 4, layers: 2, eps: 1e-5, roberta: true, pad: 1}
	for r, ids := range [][]int{a, b} {
		want := ref.logits(ids, make([]int, len(ids)))
		for c, w := range want {
			if d := math.Abs(float64(got[r*2+c]) - w); d > 1e-4*math.Max(1, math.Abs(w)) {
				t.Errorf("row %d class %d: %v, reference %v", r, c, got[r*2+c], w)
			}
		}
	}
}

// TestRobertaPlainEncoder: a RobertaModel checkpoint (no head) gets a
// fresh classification head, reported, and its pooler is left unused
// (RoBERTa classifies through its head's own dense layer).
func TestRobertaPlainEncoder(t *testing.T) {
	m, rep, _, _, err := loadBert(t, hftest.Bert{Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 34, RoBERTa: true, Seed: 9}, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if want := []string{"pooler.dense.weight", "pooler.dense.bias", "classifier.weight", "classifier.bias"}; !slices.Equal(rep.Initialised, want) {
		t.Errorf("initialised %v, want %v", rep.Initialised, want)
	}
	if !slices.Contains(rep.Unused, "pooler.dense.weight") {
		t.Errorf("unused %v: the encoder's pooler is not RoBERTa's head", rep.Unused)
	}
}

// randomSentiment is n texts "article noun verb [very] word" with every
// choice drawn at random from seed, labelled by the word (good, great:
// 1; bad, awful: 0): nothing but the word predicts the label (in
// sentimentPieces's texts the article and noun do too, in the training
// split only, and a model that reads their lengths in bytes learns them).
func randomSentiment(tok hf.Tokenizer, n int, seed uint64) Data {
	r := rand.New(rand.NewPCG(seed, 3))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	var d Data
	for i := 0; i < n; i++ {
		k := r.IntN(4)
		text := pick("the", "a") + " " + pick("film", "movie") + " " + pick("was", "is")
		if r.IntN(4) == 0 {
			text += " very"
		}
		ids, _, _ := tok.Encode(text+" "+[]string{"good", "great", "bad", "awful"}[k], nil, 32)
		d.Seqs = append(d.Seqs, pieceIDs(ids))
		d.Labels = append(d.Labels, int64(b2i(k < 2)))
	}
	return d
}

// TestRobertaFineTunes: a tiny RoBERTa, its texts tokenized byte-level,
// learns a separable task.
func TestRobertaFineTunes(t *testing.T) {
	dir, cfg, tok, _ := writeBert(t, hftest.Bert{Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 34, RoBERTa: true, Seed: 3})
	train, valid := randomSentiment(tok, 256, 0), randomSentiment(tok, 64, 1)
	_, padPiece := tok.Special()
	pad, _ := tok.ID(padPiece)
	const epochs, batch = 16, 16
	err := torchrt.Do(func() error {
		st, err := hf.OpenSafetensors(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			return err
		}
		defer st.Close()
		torchrt.ManualSeed(11)
		m, _, err := NewBert(cfg, st, BertOptions{Classes: 2, Dropout: 0.1, LR: 1e-2, Warmup: 0.1, TotalSteps: epochs * train.Len() / batch, Clip: 1}, testDevice(t))
		if err != nil {
			return err
		}
		defer m.Close()
		res, err := Train(context.Background(), m, train, valid, TrainOptions{Epochs: epochs, Batch: batch, Classes: 2, Pad: int64(pad), Seed: 5, Device: testDevice(t), Dir: t.TempDir()})
		if err != nil {
			return err
		}
		if res.Valid.Accuracy < 0.9 {
			t.Errorf("validation accuracy %.3f after fine-tuning on a separable task (history %+v)", res.Valid.Accuracy, res.Epochs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBertResumesMidEpoch: the papers' fine-tuning is one epoch; stopped
// within it, it resumes from the state kept after step 4 (AdamW's
// moments, the warm-up schedule's position, the generator) and ends bit
// for bit as an uninterrupted epoch does.
func TestBertResumesMidEpoch(t *testing.T) {
	dir, cfg, wp, _ := writeBert(t, hftest.Bert{Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPositions: 32, Seed: 3})
	train, valid := sentimentPieces(t, wp, 96, 0), sentimentPieces(t, wp, 32, 1)
	_, padPiece := wp.Special()
	pad, _ := wp.ID(padPiece)
	run := func(ck string, stopAt int) (TrainResult, metrics.Classification, error) {
		opt := TrainOptions{Epochs: 1, Batch: 8, Pad: int64(pad), Checkpoint: ck, checkpointSteps: 4} // 12 steps
		return fineTuneTiny(t, dir, cfg, train, valid, 0.5, opt, trainStoppedAtStep, stopAt)
	}
	whole, wholeAfter, err := run("", 0)
	if err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(t.TempDir(), "ck")
	if _, _, err := run(ck, 7); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ck, "epoch-1-step-4", "optimizer.pt.steps")); err != nil {
		t.Fatalf("no state kept after step 4: %v", err)
	}
	resumed, resumedAfter, err := run(ck, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameTraining(t, whole, resumed, wholeAfter, resumedAfter)
}

// fineTuneTiny fine-tunes a fresh model of the tiny BERT checkpoint in dir
// (libtorch's generator seeded 11; dropout 0.1, learning rate 1e-2 with
// warm-up over that share of opt's steps, clipping to 1) on train with
// opt (2 classes, batch order seed 5, on the test device), through stop
// (trainStopped or trainStoppedAtStep) at at.
func fineTuneTiny(t *testing.T, dir string, cfg hf.Config, train, valid Data, warmup float64, opt TrainOptions,
	stop func(Classifier, Data, Data, TrainOptions, int) (TrainResult, metrics.Classification, error), at int) (res TrainResult, after metrics.Classification, err error) {
	opt.Classes, opt.Seed, opt.Device, opt.Dir = 2, 5, testDevice(t), t.TempDir()
	err = torchrt.Do(func() error {
		st, err := hf.OpenSafetensors(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			return err
		}
		defer st.Close()
		torchrt.ManualSeed(11)
		m, _, err := NewBert(cfg, st, BertOptions{Classes: 2, Dropout: 0.1, LR: 1e-2, Warmup: warmup, TotalSteps: opt.Epochs * train.Len() / opt.Batch, Clip: 1}, opt.Device)
		if err != nil {
			return err
		}
		defer m.Close()
		res, after, err = stop(m, train, valid, opt, at)
		return err
	})
	return res, after, err
}
