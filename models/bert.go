package models

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/hf"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/spec"
	"github.com/xp-nlp/xp/torchrt"
)

// Bert is BERT's encoder with a sequence-classification head, as Hugging
// Face's BertForSequenceClassification computes it: word, position and
// token-type embeddings summed and layer-normalised; post-LN encoder
// layers (multi-head self-attention, then a feed-forward block with
// exact, erf-based GELU, each added to its input and layer-normalised);
// a tanh pooler over the first token; dropout; a linear classifier.
// A DistilBERT checkpoint is the same encoder without token types, its
// head pre_classifier, ReLU, dropout and the classifier
// (DistilBertForSequenceClassification). A RoBERTa checkpoint is the
// same encoder with one token type and positions counted from
// padding_idx + 1, its head dropout, dense, tanh, dropout and out_proj
// (RobertaForSequenceClassification). Parameters live in one VarStore
// under BERT's names without the "bert." prefix (DistilBERT's and
// RoBERTa's mapped onto them: distilName, robertaName).
type Bert struct {
	cfg     hf.Config
	opt     BertOptions
	device  gotch.Device
	vs      *nn.VarStore
	p       map[string]*ts.Tensor
	decayed []*ts.Tensor // the parameters weight decay applies to (decays)
	adam    *nn.Optimizer
	steps   int // optimisation steps taken (the schedule's position)
}

// BertOptions are a Bert's head and fine-tuning settings; the defaults
// of Chen et al. (2023, §5.1) are Hugging Face's: AdamW (β 0.9, 0.999,
// ε 1e-8, no weight decay) at learning rate 2e-5 decaying linearly to 0
// over the training's steps, no warm-up, gradients clipped to norm 1,
// dropout 0.1.
type BertOptions struct {
	Classes int
	Dropout float64
	LR      float64
	// WeightDecay is AdamW's decoupled weight decay, of the weights
	// decays names (0: none).
	WeightDecay float64
	// Warmup is the share of TotalSteps over which the learning rate
	// rises linearly from 0; it then falls linearly to 0 at TotalSteps
	// (TotalSteps 0: a constant rate).
	Warmup     float64
	TotalSteps int
	Clip       float64 // 0: no clipping
	// Precision is "fp32" (or "") for float32 throughout, or "bf16" for
	// the forward pass under autocast in bfloat16 (torchrt.Autocast), as
	// torch.autocast(dtype=torch.bfloat16) runs Hugging Face's models.
	Precision string
}

// lr is the learning rate of step s (0-based) under the schedule.
func (o BertOptions) lr(s int) float64 {
	if o.TotalSteps <= 0 {
		return o.LR
	}
	warm := int(math.Round(o.Warmup * float64(o.TotalSteps)))
	if s < warm { // Hugging Face's get_linear_schedule_with_warmup: step 0 at 0
		return o.LR * float64(s) / float64(warm)
	}
	return o.LR * math.Max(0, float64(o.TotalSteps-s)/float64(max(1, o.TotalSteps-warm)))
}

// BertLoad says what building a Bert took from the checkpoint: the
// parameters loaded, those initialised afresh (a classification head
// the checkpoint lacks, or a pooler), and the checkpoint's tensors left
// unused (pretraining heads, buffers).
type BertLoad struct {
	Loaded, Initialised, Unused []string
}

// bertParams lists the parameters of a BERT encoder with a head of
// classes outputs, by name, with their shapes.
func bertParams(c hf.Config, classes int) (names []string, shapes map[string][]int64) {
	D, I := int64(c.Hidden), int64(c.Intermediate)
	shapes = map[string][]int64{}
	add := func(name string, shape ...int64) {
		names = append(names, name)
		shapes[name] = shape
	}
	add("embeddings.word_embeddings.weight", int64(c.VocabSize), D)
	add("embeddings.position_embeddings.weight", int64(c.MaxPositions), D)
	if c.TypeVocab > 0 {
		add("embeddings.token_type_embeddings.weight", int64(c.TypeVocab), D)
	}
	add("embeddings.LayerNorm.weight", D)
	add("embeddings.LayerNorm.bias", D)
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		for _, n := range []string{"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"} {
			add(p+n+".weight", D, D)
			add(p+n+".bias", D)
		}
		add(p+"attention.output.LayerNorm.weight", D)
		add(p+"attention.output.LayerNorm.bias", D)
		add(p+"intermediate.dense.weight", I, D)
		add(p+"intermediate.dense.bias", I)
		add(p+"output.dense.weight", D, I)
		add(p+"output.dense.bias", D)
		add(p+"output.LayerNorm.weight", D)
		add(p+"output.LayerNorm.bias", D)
	}
	add("pooler.dense.weight", D, D)
	add("pooler.dense.bias", D)
	add("classifier.weight", int64(classes), D)
	add("classifier.bias", int64(classes))
	return names, shapes
}

// Runs reports whether xp runs checkpoints of cfg's architecture (BERT,
// DistilBERT, RoBERTa), in the one message every caller gives.
func Runs(cfg hf.Config) error {
	if !slices.Contains(hf.Architectures, cfg.ModelType) {
		return fmt.Errorf("a %s checkpoint: xp runs %s checkpoints", cfg.ModelType, strings.Join(hf.Architectures, ", "))
	}
	return nil
}

// NewBert builds the model for a BERT checkpoint (cfg; st its weights)
// with a head of classes outputs. Every encoder parameter must be in the
// checkpoint, under its own name, with "bert." before it, or with
// LayerNorm's gamma and beta for weight and bias; one that is missing or
// mis-shaped is an error naming it. The pooler and the head are loaded
// where the checkpoint has them at the right size, and otherwise drawn
// from libtorch's generator (seed it first: torchrt.ManualSeed) as
// Hugging Face initialises them: weights normal with standard deviation
// 0.02, biases zero. dropout is applied in training only.
func NewBert(cfg hf.Config, st *hf.Safetensors, o BertOptions, device gotch.Device) (*Bert, BertLoad, error) {
	var rep BertLoad
	if err := Runs(cfg); err != nil {
		return nil, rep, err
	}
	if o.Classes < 2 {
		return nil, rep, fmt.Errorf("bert: %d classes", o.Classes)
	}
	if o.Precision != "" && o.Precision != "fp32" && o.Precision != "bf16" {
		return nil, rep, fmt.Errorf("bert: precision %q: want fp32 or bf16", o.Precision)
	}
	if o.WeightDecay < 0 || o.WeightDecay >= 1 {
		return nil, rep, fmt.Errorf("bert: weight decay %v: want it in [0, 1)", o.WeightDecay)
	}
	names, shapes := bertParams(cfg, o.Classes)
	m := &Bert{cfg: cfg, opt: o, device: device, vs: nn.NewVarStore(device), p: map[string]*ts.Tensor{}}
	used := map[string]bool{}
	var missing, misshaped []string
	find := func(name string) (string, bool) {
		cands := []string{name, "bert." + name}
		switch cfg.ModelType {
		case "distilbert":
			d := distilName(name)
			cands = []string{d, "distilbert." + d}
		case "roberta":
			r := robertaName(name)
			cands = []string{r, "roberta." + r}
		}
		if n, ok := strings.CutSuffix(name, "LayerNorm.weight"); ok {
			cands = append(cands, n+"LayerNorm.gamma", "bert."+n+"LayerNorm.gamma")
		}
		if n, ok := strings.CutSuffix(name, "LayerNorm.bias"); ok {
			cands = append(cands, n+"LayerNorm.beta", "bert."+n+"LayerNorm.beta")
		}
		for _, c := range cands {
			if _, ok := st.Tensors[c]; ok {
				return c, true
			}
		}
		return "", false
	}
	for _, name := range names {
		fresh := strings.HasPrefix(name, "pooler.") || strings.HasPrefix(name, "classifier.")
		src, ok := find(name)
		if ok {
			if got := st.Tensors[src].Shape; !slices.Equal(got, shapes[name]) {
				if !fresh {
					misshaped = append(misshaped, fmt.Sprintf("%s %v (want %v)", src, got, shapes[name]))
					continue
				}
				ok = false // a head of another size: a fresh one
			}
		}
		if !ok && !fresh {
			missing = append(missing, name)
			continue
		}
		var t *ts.Tensor
		var err error
		if ok {
			used[src] = true
			var v []float32
			if v, _, err = st.Float32(src); err == nil {
				t, err = m.add(name, v, shapes[name])
			}
			rep.Loaded = append(rep.Loaded, name)
		} else {
			t, err = m.init(name, shapes[name])
			rep.Initialised = append(rep.Initialised, name)
		}
		if err != nil {
			m.Close()
			return nil, rep, fmt.Errorf("bert: %s: %w", name, err)
		}
		m.p[name] = t
		if decays(name) {
			m.decayed = append(m.decayed, t)
		}
	}
	if len(missing)+len(misshaped) > 0 {
		m.Close()
		return nil, rep, fmt.Errorf("bert: %s: %s", st.Path, tensorList(missing, misshaped))
	}
	for _, n := range st.Names() {
		if !used[n] {
			rep.Unused = append(rep.Unused, n)
		}
	}
	if o.LR > 0 {
		var err error
		if m.adam, err = nn.NewAdamWConfig(0.9, 0.999, 0).Build(m.vs, o.lr(0)); err != nil {
			m.Close()
			return nil, rep, fmt.Errorf("bert: optimizer: %w", err)
		}
	}
	return m, rep, nil
}

// Step is one fine-tuning step on a batch of single texts (piece ids,
// padded after each row's length): cross-entropy, gradients clipped,
// AdamW at the schedule's learning rate.
func (m *Bert) Step(b *Batch) (float64, error) { return readLoss(m.StepLoss(b)) }

// StepLoss is Step returning the loss unread (see BiLSTM.StepLoss).
func (m *Bert) StepLoss(b *Batch) (*ts.Tensor, error) {
	if m.adam == nil {
		return nil, errors.New("bert: built without a learning rate: not for training")
	}
	m.adam.SetLR(m.opt.lr(m.steps))
	loss, err := stepLoss(b, m.adam, m.opt.Clip, m.decay, m.batchLogits)
	if err == nil {
		m.steps++
	}
	return loss, err
}

// decays reports whether weight decay applies to the parameter of this
// name: every one but the biases and the layer norms' weights, as Hugging
// Face's Trainer chooses (get_decay_parameter_names: no bias, nothing of
// a LayerNorm), which for BERT, DistilBERT and RoBERTa is run_glue's
// no_decay = ["bias", "LayerNorm.weight"].
func decays(name string) bool {
	return !strings.HasSuffix(name, ".bias") && !strings.Contains(name, "LayerNorm.")
}

// decay is AdamW's decoupled weight decay as torch.optim.AdamW applies
// it within its step: each decayed parameter times 1 − lr·weight_decay,
// at the step's learning rate, beside (not through) Adam's moments. The
// optimizer itself runs without decay. One multi-tensor op scales them
// all (on the CPU the same products as one op per parameter).
func (m *Bert) decay() error {
	if m.opt.WeightDecay == 0 {
		return nil
	}
	prev, err := ts.GradSetEnabled(false) // an in-place change of a leaf that requires gradients
	if err != nil {
		return err
	}
	defer ts.GradSetEnabled(prev)
	if err := ts.XpForeachMulScalar_(m.decayed, 1-m.opt.lr(m.steps)*m.opt.WeightDecay); err != nil {
		return fmt.Errorf("bert: weight decay: %w", err)
	}
	return nil
}

// Predict returns the arg-max class of each example, in the order of the
// idx the batch was built from.
func (m *Bert) Predict(b *Batch) ([]int64, error) { return predict(b, m.device, m.batchLogits) }

// Extend refuses rows: a transformer reads its own tokenizer's pieces,
// every one of which it has an embedding for.
func (m *Bert) Extend(rows []float32) error {
	if len(rows) > 0 {
		return errors.New("bert: no embedding rows to extend: its tokenizer maps every text into its own vocabulary")
	}
	return nil
}

// Save writes the model's parameters to path (Load reads them).
func (m *Bert) Save(path string) error {
	if err := saveVars(m.vs, path); err != nil {
		return fmt.Errorf("bert: save %s: %w", path, err)
	}
	return nil
}

// Load replaces the parameters by those Save wrote for a model of the
// same configuration.
func (m *Bert) Load(path string) error {
	if err := m.vs.Load(path); err != nil {
		return fmt.Errorf("bert: load %s: %w", path, err)
	}
	return nil
}

// SaveOptimizer writes AdamW's state and the schedule's position.
func (m *Bert) SaveOptimizer(path string) error {
	if m.adam == nil {
		return errors.New("bert: no optimizer")
	}
	if err := saveOptimizer(m.adam, path); err != nil {
		return err
	}
	return xio.WriteFileAtomic(path+".steps", []byte(strconv.Itoa(m.steps)+"\n"))
}

// LoadOptimizer restores what SaveOptimizer wrote.
func (m *Bert) LoadOptimizer(path string) error {
	if m.adam == nil {
		return errors.New("bert: no optimizer")
	}
	b, err := xio.ReadFileMax(path+".steps", 64)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return fmt.Errorf("%s.steps: %q is not a step count", path, b)
	}
	if err := m.adam.XpLoad(path); err != nil {
		return err
	}
	m.steps = n
	return nil
}

// distilName is DistilBERT's name for a BERT parameter (the same
// post-LN encoder under other names; pre_classifier is its pooler).
func distilName(name string) string {
	return strings.NewReplacer(
		"encoder.layer.", "transformer.layer.",
		"attention.self.query", "attention.q_lin", "attention.self.key", "attention.k_lin", "attention.self.value", "attention.v_lin",
		"attention.output.dense", "attention.out_lin", "attention.output.LayerNorm", "sa_layer_norm",
		"intermediate.dense", "ffn.lin1", "output.dense", "ffn.lin2", "output.LayerNorm", "output_layer_norm",
		"pooler.dense", "pre_classifier",
	).Replace(name)
}

// robertaName is RoBERTa's name for a BERT parameter: the same encoder;
// its sequence-classification head (RobertaClassificationHead) is a
// dense layer and tanh over the first piece, then out_proj, which xp
// holds as the pooler and the classifier.
func robertaName(name string) string {
	return strings.NewReplacer("pooler.dense", "classifier.dense", "classifier.", "classifier.out_proj.").Replace(name)
}

// tensorList says which tensors were missing or mis-shaped, in one line.
func tensorList(missing, misshaped []string) string {
	var parts []string
	list := func(what string, xs []string) {
		if len(xs) == 0 {
			return
		}
		shown := xs[:min(len(xs), 4)]
		s := fmt.Sprintf("%d %s (%s", len(xs), what, strings.Join(shown, ", "))
		if len(xs) > len(shown) {
			s += ", …"
		}
		parts = append(parts, s+")")
	}
	list("tensors missing", missing)
	list("tensors of the wrong shape", misshaped)
	return strings.Join(parts, "; ") + ": not a checkpoint of the architecture its config.json names"
}

// add puts a parameter with the given values into the store, trainable,
// under its dotted name.
func (m *Bert) add(name string, v []float32, shape []int64) (*ts.Tensor, error) {
	src, err := toDevice(v, shape, m.device)
	if err != nil {
		return nil, err
	}
	defer src.Drop()
	p, leaf := m.path(name)
	return p.Add(leaf, src, true)
}

// init draws a fresh parameter: weights normal(0, 0.02), biases zero.
func (m *Bert) init(name string, shape []int64) (*ts.Tensor, error) {
	p, leaf := m.path(name)
	if leaf == "bias" {
		return p.Zeros(leaf, shape)
	}
	return p.Randn(leaf, shape, 0, 0.02)
}

// path is the store's path of a dotted name and its last element.
func (m *Bert) path(name string) (*nn.Path, string) {
	parts := strings.Split(name, ".")
	p := m.vs.Root()
	for _, s := range parts[:len(parts)-1] {
		p = p.Sub(s)
	}
	return p, parts[len(parts)-1]
}

// Close frees the model's tensors.
func (m *Bert) Close() {
	if m.adam != nil {
		m.adam.Drop()
		m.adam = nil
	}
	if m.vs != nil {
		m.vs.Destroy()
		m.vs = nil
	}
}

// Parameters is the number of values the model holds.
func (m *Bert) Parameters() int64 {
	var n int64
	names, shapes := bertParams(m.cfg, m.opt.Classes)
	for _, name := range names {
		k := int64(1)
		for _, d := range shapes[name] {
			k *= d
		}
		n += k
	}
	return n
}

// Encoded is a batch of texts in the model's ids: rows of token ids and
// token types, padded to one length (Mask 1 on real tokens, 0 on
// padding).
type Encoded struct {
	IDs, Types, Mask [][]int
}

// Logits runs the model on a batch and returns rows × classes scores as
// float32 values (row-major). train applies dropout.
func (m *Bert) Logits(b Encoded, train bool) ([]float32, error) {
	var out []float32
	err := torchrt.Do(func() error {
		t, err := m.logits(b, train)
		if err != nil {
			return err
		}
		if m.device.IsCuda() {
			if t, err = t.To(gotch.CPU, true); err != nil {
				return err
			}
		}
		defer t.Drop()
		out = make([]float32, len(b.IDs)*m.opt.Classes)
		return t.CopyData(out, uint(len(out)))
	})
	return out, err
}

// logits is the forward pass of an Encoded batch; the caller drops the
// result.
func (m *Bert) logits(b Encoded, train bool) (*ts.Tensor, error) {
	B := int64(len(b.IDs))
	if B == 0 {
		return nil, errors.New("bert: an empty batch")
	}
	T := int64(len(b.IDs[0]))
	ids, types := make([]int64, 0, B*T), make([]int64, 0, B*T)
	maskAdd := make([]float32, 0, B*T)
	for r := range b.IDs {
		if int64(len(b.IDs[r])) != T || len(b.Types[r]) != len(b.IDs[r]) || len(b.Mask[r]) != len(b.IDs[r]) {
			return nil, fmt.Errorf("bert: row %d of the batch is not padded to %d", r, T)
		}
		for i, id := range b.IDs[r] {
			if id < 0 || id >= m.cfg.VocabSize || b.Types[r][i] < 0 || (m.cfg.TypeVocab > 0 && b.Types[r][i] >= m.cfg.TypeVocab) {
				return nil, fmt.Errorf("bert: row %d: id %d or type %d outside the vocabulary", r, id, b.Types[r][i])
			}
			ids, types = append(ids, int64(id)), append(types, int64(b.Types[r][i]))
			maskAdd = append(maskAdd, maskValue(b.Mask[r][i] != 0))
		}
	}
	var s torchrt.Scope
	defer s.Drop()
	idT, err := s.Keep(batchToDevice(ids, []int64{B, T}, m.device))
	if err != nil {
		return nil, err
	}
	typeT, err := s.Keep(batchToDevice(types, []int64{B, T}, m.device))
	if err != nil {
		return nil, err
	}
	mask, err := s.Keep(batchToDevice(maskAdd, []int64{B, 1, 1, T}, m.device))
	if err != nil {
		return nil, err
	}
	return m.forward(idT, typeT, mask, B, T, train)
}

// maskValue is what attention adds to a score: 0 at a real token, at
// padding Hugging Face's torch.finfo(float32).min.
func maskValue(real bool) float32 {
	if real {
		return 0
	}
	return -math.MaxFloat32
}

// batchLogits is the forward pass of a Batch of single texts (rows of
// piece ids padded after each row's Lengths, token type 0 throughout);
// the caller drops the result.
func (m *Bert) batchLogits(b *Batch, train bool) (*ts.Tensor, error) {
	if b.Second != nil {
		return nil, errors.New("bert: a sentence pair is one sequence ([CLS] a [SEP] b [SEP]) with token types (Data.Types), not two texts")
	}
	size, err := b.Tokens.Size()
	if err != nil {
		return nil, err
	}
	B, T := size[0], size[1]
	if T > int64(m.cfg.MaxLength()) {
		return nil, fmt.Errorf("bert: %d pieces in a row, at most %d", T, m.cfg.MaxLength())
	}
	mask, err := b.attentionMask(m.device) // the batch's own: it drops it
	if err != nil {
		return nil, err
	}
	var s torchrt.Scope
	defer s.Drop()
	types := b.Types
	if types == nil {
		if types, err = s.Keep(ts.Zeros([]int64{B, T}, gotch.Int64, m.device)); err != nil {
			return nil, err
		}
	}
	return m.forward(b.Tokens, types, mask, B, T, train)
}

// forward runs the model on ids and token types (B × T, int64) with the
// additive attention mask (B × 1 × 1 × T) and returns float32 logits;
// the caller drops the result. In bf16 the pass runs under autocast and
// the logits are cast to float32 for the loss, as a loss computed inside
// torch.autocast is.
func (m *Bert) forward(idT, typeT, mask *ts.Tensor, B, T int64, train bool) (*ts.Tensor, error) {
	if m.opt.Precision != "bf16" {
		return m.forward32(idT, typeT, mask, B, T, train)
	}
	var out *ts.Tensor
	err := torchrt.Autocast(m.device, gotch.BFloat16, func() (err error) {
		out, err = m.forward32(idT, typeT, mask, B, T, train)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out.Totype(gotch.Float, true)
}

// forward32 is forward's pass, in whatever precision the thread's
// autocast setting gives.
func (m *Bert) forward32(idT, typeT, mask *ts.Tensor, B, T int64, train bool) (*ts.Tensor, error) {
	var s torchrt.Scope
	defer s.Drop()
	var err error
	p := m.p
	drop := func(x *ts.Tensor) (*ts.Tensor, error) {
		if train && m.opt.Dropout > 0 {
			return s.Keep(ts.Dropout(x, m.opt.Dropout, true))
		}
		return x, nil
	}
	ln := func(x *ts.Tensor, name string) (*ts.Tensor, error) {
		return s.Keep(ts.LayerNorm(x, []int64{int64(m.cfg.Hidden)}, p[name+".weight"], p[name+".bias"], m.cfg.LayerNormEps, false))
	}
	lin := func(x *ts.Tensor, name string) (*ts.Tensor, error) {
		return s.Keep(ts.Linear(x, p[name+".weight"], p[name+".bias"]))
	}
	// Embeddings.
	x, err := s.Keep(ts.Embedding(p["embeddings.word_embeddings.weight"], idT, -1, false, false))
	if err != nil {
		return nil, err
	}
	// Positions 0…T−1, from RoBERTa's offset (padding_idx + 1: its
	// padding's own position only moves padding's outputs, which no real
	// piece attends to).
	pos, err := s.Keep(p["embeddings.position_embeddings.weight"].Narrow(0, int64(m.cfg.PositionOffset), T, false))
	if err != nil {
		return nil, err
	}
	if x, err = s.Keep(x.Add(pos, false)); err != nil {
		return nil, err
	}
	if w, ok := p["embeddings.token_type_embeddings.weight"]; ok { // DistilBERT has none
		typ, err := s.Keep(ts.Embedding(w, typeT, -1, false, false))
		if err != nil {
			return nil, err
		}
		if x, err = s.Keep(x.Add(typ, false)); err != nil {
			return nil, err
		}
	}
	if x, err = ln(x, "embeddings.LayerNorm"); err != nil {
		return nil, err
	}
	if x, err = drop(x); err != nil {
		return nil, err
	}
	H := int64(m.cfg.Heads)
	D := int64(m.cfg.Hidden)
	dh := D / H
	heads := func(t *ts.Tensor) (*ts.Tensor, error) { // [B,T,D] → [B,H,T,dh]
		v, err := s.Keep(t.View([]int64{B, T, H, dh}, false))
		if err != nil {
			return nil, err
		}
		return s.Keep(v.Permute([]int64{0, 2, 1, 3}, false))
	}
	scale := ts.FloatScalar(1 / math.Sqrt(float64(dh)))
	defer scale.Drop()
	for l := 0; l < m.cfg.Layers; l++ {
		pre := fmt.Sprintf("encoder.layer.%d.", l)
		var qkv [3]*ts.Tensor
		for i, n := range []string{"query", "key", "value"} {
			t, err := lin(x, pre+"attention.self."+n)
			if err != nil {
				return nil, err
			}
			if qkv[i], err = heads(t); err != nil {
				return nil, err
			}
		}
		kT, err := s.Keep(qkv[1].Transpose(-1, -2, false))
		if err != nil {
			return nil, err
		}
		scores, err := s.Keep(qkv[0].Matmul(kT, false))
		if err != nil {
			return nil, err
		}
		if scores, err = s.Keep(scores.MulScalar(scale, false)); err != nil {
			return nil, err
		}
		if scores, err = s.Keep(scores.Add(mask, false)); err != nil {
			return nil, err
		}
		probs, err := s.Keep(scores.Softmax(-1, gotch.Float, false))
		if err != nil {
			return nil, err
		}
		if probs, err = drop(probs); err != nil {
			return nil, err
		}
		ctx, err := s.Keep(probs.Matmul(qkv[2], false))
		if err != nil {
			return nil, err
		}
		if ctx, err = s.Keep(ctx.Permute([]int64{0, 2, 1, 3}, false)); err != nil {
			return nil, err
		}
		if ctx, err = s.Keep(ctx.Contiguous(false)); err != nil {
			return nil, err
		}
		if ctx, err = s.Keep(ctx.View([]int64{B, T, D}, false)); err != nil {
			return nil, err
		}
		a, err := lin(ctx, pre+"attention.output.dense")
		if err != nil {
			return nil, err
		}
		if a, err = drop(a); err != nil {
			return nil, err
		}
		if a, err = s.Keep(a.Add(x, false)); err != nil {
			return nil, err
		}
		if x, err = ln(a, pre+"attention.output.LayerNorm"); err != nil {
			return nil, err
		}
		h, err := lin(x, pre+"intermediate.dense")
		if err != nil {
			return nil, err
		}
		if h, err = s.Keep(h.Gelu("none", false)); err != nil {
			return nil, err
		}
		o, err := lin(h, pre+"output.dense")
		if err != nil {
			return nil, err
		}
		if o, err = drop(o); err != nil {
			return nil, err
		}
		if o, err = s.Keep(o.Add(x, false)); err != nil {
			return nil, err
		}
		if x, err = ln(o, pre+"output.LayerNorm"); err != nil {
			return nil, err
		}
	}
	first, err := s.Keep(x.Select(1, 0, false))
	if err != nil {
		return nil, err
	}
	if m.cfg.ModelType == "roberta" { // dropout before its dense layer too
		if first, err = drop(first); err != nil {
			return nil, err
		}
	}
	pooled, err := lin(first, "pooler.dense")
	if err != nil {
		return nil, err
	}
	if m.cfg.ModelType == "distilbert" { // pre_classifier, ReLU, seq_classif_dropout
		if pooled, err = s.Keep(pooled.Relu(false)); err != nil {
			return nil, err
		}
		if train && m.cfg.HeadDropout > 0 {
			if pooled, err = s.Keep(ts.Dropout(pooled, m.cfg.HeadDropout, true)); err != nil {
				return nil, err
			}
		}
		return ts.Linear(pooled, p["classifier.weight"], p["classifier.bias"])
	}
	if pooled, err = s.Keep(pooled.Tanh(false)); err != nil {
		return nil, err
	}
	if pooled, err = drop(pooled); err != nil {
		return nil, err
	}
	return ts.Linear(pooled, p["classifier.weight"], p["classifier.bias"])
}

// transformerKind fine-tunes the pretrained checkpoint in env.Checkpoint
// (a Hugging Face folder: config.json and model.safetensors) from the
// transformer descriptor's parameters.
var transformerKind = kind{name: "transformer", build: func(v spec.Values, env Env) (Model, error) {
	cfg, err := hf.ReadConfig(env.Checkpoint)
	if err != nil {
		return nil, err
	}
	st, err := hf.OpenWeights(env.Checkpoint)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	m, _, err := NewBert(cfg, st, BertOptions{Classes: int(env.Classes), Dropout: v.Float("dropout"), LR: v.Float("lr"), WeightDecay: v.Float("weight_decay"),
		Warmup: v.Float("warmup"), TotalSteps: env.Steps, Clip: v.Float("clip"), Precision: v.String("precision")}, env.Device)
	return m, err
}}
