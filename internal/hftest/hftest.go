// Package hftest writes tiny Hugging Face checkpoints for tests: a
// config.json, a vocab.txt and a model.safetensors of seeded random
// weights in the layout of a saved BertForSequenceClassification (or a
// plain BertModel), so that xp's transformer path is tested without
// weights that cannot be downloaded here.
package hftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/xp-nlp/xp/hf"
)

// Bert describes a tiny BERT checkpoint.
type Bert struct {
	Vocab        []string // pieces, [PAD] [UNK] [CLS] [SEP] [MASK] first
	Hidden       int
	Layers       int
	Heads        int
	Intermediate int
	MaxPositions int
	// Classes > 0 writes a classification head (classifier.*) and the
	// "bert." prefix; 0 writes a plain encoder (no prefix, no head).
	Classes int
	// GammaBeta names LayerNorm parameters gamma and beta, as the
	// original TensorFlow-converted checkpoints do.
	GammaBeta bool
	// PositionIDs adds the position_ids buffer some checkpoints carry.
	PositionIDs bool
	Seed        uint64
	// DistilBERT writes DistilBertForSequenceClassification's layout (or
	// DistilBertModel's without Classes): no token types, its own
	// parameter names, pre_classifier for the pooler.
	DistilBERT bool
	// RoBERTa writes RobertaForSequenceClassification's layout (or
	// RobertaModel's without Classes): the "roberta." prefix, one token
	// type, positions from padding_idx + 1 (MaxPositions rows, as
	// config.json's max_position_embeddings counts them), its head
	// classifier.dense and classifier.out_proj and no pooler; its
	// tokenizer is byte-level BPE (vocab.json, merges.txt: RobertaMerges
	// over the byte alphabet), Vocab unused.
	RoBERTa bool
	// VocabSize, where Vocab is nil, makes a vocabulary of that many
	// pieces (the special ones, then w5, w6, …): bert-base's shape for
	// benchmarks.
	VocabSize int
}

// RobertaMerges are the merges of the tiny RoBERTa tokenizer: enough to
// make " good", " great", " bad", " awful" and " film" one piece each.
var RobertaMerges = []string{"Ġ g", "o o", "Ġg oo", "Ġgoo d", "Ġ b", "Ġb a", "Ġba d", "Ġ f", "i l", "Ġf il", "Ġfil m",
	"Ġg r", "Ġgr e", "Ġgre a", "Ġgrea t", "Ġ a", "Ġa w", "Ġaw f", "Ġawf u", "Ġawfu l"}

// robertaVocab is the tiny RoBERTa vocabulary: its special pieces, the
// byte alphabet and the merges' results.
func robertaVocab() (pieces []string, ids map[string]int) {
	ids = map[string]int{}
	add := func(p string) {
		if _, ok := ids[p]; !ok {
			ids[p] = len(pieces)
			pieces = append(pieces, p)
		}
	}
	for _, p := range []string{"<s>", "<pad>", "</s>", "<unk>"} {
		add(p)
	}
	for _, p := range hf.ByteAlphabet() {
		add(p)
	}
	for _, m := range RobertaMerges {
		add(strings.ReplaceAll(m, " ", ""))
	}
	return pieces, ids
}

// DefaultVocab is a small WordPiece vocabulary.
var DefaultVocab = strings.Fields("[PAD] [UNK] [CLS] [SEP] [MASK] the a film movie good bad great awful was is not very ##s ##ly ##ing , . ! un ##want ##ed runn")

// Write writes the checkpoint into dir and returns the tensors it wrote
// (by name as written).
func (b Bert) Write(dir string) (map[string]hf.Tensor32, error) {
	if b.Vocab == nil && b.VocabSize > 0 {
		b.Vocab = append([]string(nil), DefaultVocab[:5]...)
		for i := len(b.Vocab); i < b.VocabSize; i++ {
			b.Vocab = append(b.Vocab, fmt.Sprintf("w%d", i))
		}
	}
	if b.Vocab == nil {
		b.Vocab = DefaultVocab
	}
	var bpeIDs map[string]int
	if b.RoBERTa {
		b.Vocab, bpeIDs = robertaVocab()
	}
	r := rand.New(rand.NewPCG(b.Seed, 7))
	normal := func(n int, std float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * std)
		}
		return v
	}
	prefix := ""
	if b.Classes > 0 {
		prefix = "bert."
		if b.RoBERTa {
			prefix = "roberta."
		}
	}
	t := map[string]hf.Tensor32{}
	put := func(name string, std float64, shape ...int64) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		t[name] = hf.Tensor32{Shape: shape, Data: normal(int(n), std)}
	}
	ln := func(name string) {
		w, bias := "weight", "bias"
		if b.GammaBeta {
			w, bias = "gamma", "beta"
		}
		// Not ones and zeros, so that a parameter read under the wrong
		// name shows in the logits.
		g := normal(b.Hidden, 0.1)
		for i := range g {
			g[i]++
		}
		t[name+"."+w] = hf.Tensor32{Shape: []int64{int64(b.Hidden)}, Data: g}
		put(name+"."+bias, 0.1, int64(b.Hidden))
	}
	D, I, V := int64(b.Hidden), int64(b.Intermediate), int64(len(b.Vocab))
	e := prefix + "embeddings."
	put(e+"word_embeddings.weight", 0.5, V, D)
	put(e+"position_embeddings.weight", 0.5, int64(b.MaxPositions), D)
	types := int64(2)
	if b.RoBERTa {
		types = 1
	}
	put(e+"token_type_embeddings.weight", 0.5, types, D)
	ln(e + "LayerNorm")
	if b.PositionIDs {
		ids := make([]float32, b.MaxPositions)
		for i := range ids {
			ids[i] = float32(i)
		}
		t[e+"position_ids"] = hf.Tensor32{Shape: []int64{1, int64(b.MaxPositions)}, Data: ids}
	}
	for l := 0; l < b.Layers; l++ {
		p := fmt.Sprintf("%sencoder.layer.%d.", prefix, l)
		for _, n := range []string{"query", "key", "value"} {
			put(p+"attention.self."+n+".weight", 0.3, D, D)
			put(p+"attention.self."+n+".bias", 0.1, D)
		}
		put(p+"attention.output.dense.weight", 0.3, D, D)
		put(p+"attention.output.dense.bias", 0.1, D)
		ln(p + "attention.output.LayerNorm")
		put(p+"intermediate.dense.weight", 0.3, I, D)
		put(p+"intermediate.dense.bias", 0.1, I)
		put(p+"output.dense.weight", 0.3, D, I)
		put(p+"output.dense.bias", 0.1, D)
		ln(p + "output.LayerNorm")
	}
	switch {
	case b.RoBERTa && b.Classes > 0: // RobertaClassificationHead, no pooler
		put("classifier.dense.weight", 0.3, D, D)
		put("classifier.dense.bias", 0.1, D)
		put("classifier.out_proj.weight", 0.3, int64(b.Classes), D)
		put("classifier.out_proj.bias", 0.1, int64(b.Classes))
	default:
		put(prefix+"pooler.dense.weight", 0.3, D, D)
		put(prefix+"pooler.dense.bias", 0.1, D)
		if b.Classes > 0 {
			put("classifier.weight", 0.3, int64(b.Classes), D)
			put("classifier.bias", 0.1, int64(b.Classes))
		}
	}
	if b.DistilBERT {
		t = distil(t, b.Classes > 0)
	}
	var buf bytes.Buffer
	if err := hf.WriteSafetensors(&buf, t, map[string]string{"format": "pt"}); err != nil {
		return nil, err
	}
	cfg := map[string]any{"model_type": "bert", "vocab_size": len(b.Vocab), "hidden_size": b.Hidden, "num_hidden_layers": b.Layers,
		"num_attention_heads": b.Heads, "intermediate_size": b.Intermediate, "hidden_act": "gelu", "max_position_embeddings": b.MaxPositions,
		"type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}
	if b.Classes > 0 {
		cfg["architectures"] = []string{"BertForSequenceClassification"}
		id2label := map[string]string{}
		for i := 0; i < b.Classes; i++ {
			id2label[fmt.Sprint(i)] = fmt.Sprintf("LABEL_%d", i)
		}
		cfg["id2label"] = id2label
	}
	if b.DistilBERT {
		cfg = map[string]any{"model_type": "distilbert", "vocab_size": len(b.Vocab), "dim": b.Hidden, "n_layers": b.Layers, "n_heads": b.Heads,
			"hidden_dim": b.Intermediate, "activation": "gelu", "max_position_embeddings": b.MaxPositions, "dropout": 0.1, "seq_classif_dropout": 0.2}
	}
	files := map[string][]byte{"vocab.txt": []byte(strings.Join(b.Vocab, "\n") + "\n"), "model.safetensors": buf.Bytes()}
	if b.RoBERTa {
		cfg["model_type"], cfg["type_vocab_size"], cfg["layer_norm_eps"], cfg["pad_token_id"], cfg["bos_token_id"], cfg["eos_token_id"] = "roberta", 1, 1e-5, 1, 0, 2
		if b.Classes > 0 {
			cfg["architectures"] = []string{"RobertaForSequenceClassification"}
		}
		vj, err := json.Marshal(bpeIDs)
		if err != nil {
			return nil, err
		}
		delete(files, "vocab.txt")
		files["vocab.json"] = vj
		files["merges.txt"] = []byte("#version: 0.2\n" + strings.Join(RobertaMerges, "\n") + "\n")
	}
	cj, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	files["config.json"] = cj
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// distil renames a BERT layout's tensors as DistilBERT names them, and
// drops what it lacks (token types, position_ids).
func distil(t map[string]hf.Tensor32, head bool) map[string]hf.Tensor32 {
	r := strings.NewReplacer(
		"bert.", "distilbert.", "encoder.layer.", "transformer.layer.",
		"attention.self.query", "attention.q_lin", "attention.self.key", "attention.k_lin", "attention.self.value", "attention.v_lin",
		"attention.output.dense", "attention.out_lin", "attention.output.LayerNorm", "sa_layer_norm",
		"intermediate.dense", "ffn.lin1", "output.dense", "ffn.lin2", "output.LayerNorm", "output_layer_norm",
		"pooler.dense", "pre_classifier",
		".gamma", ".weight", ".beta", ".bias",
	)
	out := map[string]hf.Tensor32{}
	for name, v := range t {
		if strings.Contains(name, "token_type_embeddings") || strings.HasSuffix(name, "position_ids") {
			continue
		}
		n := strings.TrimPrefix(r.Replace(name), "distilbert.pre_classifier") // the head's, outside the encoder
		if n != r.Replace(name) {
			n = "pre_classifier" + n
		}
		if !head && strings.HasPrefix(n, "pre_classifier") {
			continue // a plain DistilBertModel has no pre_classifier
		}
		if head && !strings.HasPrefix(n, "classifier") && !strings.HasPrefix(n, "pre_classifier") && !strings.HasPrefix(n, "distilbert.") {
			n = "distilbert." + n
		}
		out[n] = v
	}
	return out
}
