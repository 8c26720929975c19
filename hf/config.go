package hf

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/internal/jsondup"
	"github.com/xp-nlp/xp/internal/xio"
)

// Architectures are the model types xp implements (config.json's
// model_type).
var Architectures = []string{"bert", "distilbert", "roberta"}

// Config is a checkpoint's config.json read into one shape for the
// architectures xp implements: BERT's names, DistilBERT's mapped onto
// them (dim → hidden size, n_layers, n_heads, hidden_dim).
type Config struct {
	ModelType        string
	VocabSize        int
	Hidden           int
	Layers           int
	Heads            int
	Intermediate     int
	Activation       string // gelu (exact, erf) is what xp implements
	MaxPositions     int
	TypeVocab        int // token types (BERT: 2; DistilBERT: none; RoBERTa: 1)
	LayerNormEps     float64
	HeadDropout      float64 // DistilBERT's seq_classif_dropout (before its classifier)
	PadTokenID       int
	Labels           []string // id2label in id order ("" unnamed)
	DoLowerCase      bool     // tokenizer_config.json's, default true for BERT
	StripAccents     *bool    // nil: follow DoLowerCase, as BERT's tokenizer does
	TokenizeCJKChars bool
	// PositionOffset is the position embedding row of a text's first
	// piece: 0, or RoBERTa's padding_idx + 1 (its positions count from
	// there: create_position_ids_from_input_ids).
	PositionOffset int
}

// MaxLength is the most pieces a row can hold: the position embeddings'
// rows after the offset.
func (c Config) MaxLength() int { return c.MaxPositions - c.PositionOffset }

// ReadConfig reads dir/config.json (and dir/tokenizer_config.json where
// present) and checks that xp implements the architecture and that its
// sizes are consistent.
func ReadConfig(dir string) (Config, error) {
	path := filepath.Join(dir, "config.json")
	b, err := xio.ReadFileMax(path, xio.MaxConfig)
	if err != nil {
		return Config{}, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Config{}, fmt.Errorf("%s: not a JSON object: %v", path, err)
	}
	if err := unique(path, b); err != nil {
		return Config{}, err
	}
	str := func(k string) string {
		var s string
		json.Unmarshal(raw[k], &s)
		return s
	}
	num := func(k string, def int) int {
		v := def
		if r, ok := raw[k]; ok {
			json.Unmarshal(r, &v)
		}
		return v
	}
	flt := func(k string, def float64) float64 {
		v := def
		if r, ok := raw[k]; ok {
			json.Unmarshal(r, &v)
		}
		return v
	}
	c := Config{ModelType: str("model_type"), DoLowerCase: true, TokenizeCJKChars: true}
	switch c.ModelType {
	case "bert", "roberta":
		c.VocabSize, c.Hidden, c.Layers, c.Heads = num("vocab_size", 0), num("hidden_size", 768), num("num_hidden_layers", 12), num("num_attention_heads", 12)
		c.Intermediate, c.Activation = num("intermediate_size", 3072), cmp.Or(str("hidden_act"), "gelu")
		c.MaxPositions, c.TypeVocab = num("max_position_embeddings", 512), num("type_vocab_size", 2)
		c.LayerNormEps, c.PadTokenID = flt("layer_norm_eps", 1e-12), num("pad_token_id", 0)
	case "distilbert":
		c.VocabSize, c.Hidden, c.Layers, c.Heads = num("vocab_size", 0), num("dim", 768), num("n_layers", 6), num("n_heads", 12)
		c.Intermediate, c.Activation = num("hidden_dim", 3072), cmp.Or(str("activation"), "gelu")
		c.MaxPositions, c.LayerNormEps, c.PadTokenID = num("max_position_embeddings", 512), 1e-12, num("pad_token_id", 0)
		c.HeadDropout = flt("seq_classif_dropout", 0.2)
	case "":
		return c, fmt.Errorf("%s: no model_type: xp reads %s checkpoints", path, strings.Join(Architectures, ", "))
	default:
		return c, fmt.Errorf("%s: model_type %q (architectures %s): xp implements %s", path, c.ModelType, raw["architectures"], strings.Join(Architectures, ", "))
	}
	if c.ModelType == "roberta" {
		c.PadTokenID = num("pad_token_id", 1)
		c.PositionOffset = c.PadTokenID + 1 // positions count from padding_idx + 1
	}
	var id2label map[string]string
	json.Unmarshal(raw["id2label"], &id2label)
	if n := num("num_labels", len(id2label)); n > 0 && n <= 1<<16 {
		c.Labels = make([]string, n)
		for i := range c.Labels {
			c.Labels[i] = id2label[fmt.Sprint(i)]
		}
	}
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<22:
		return c, fmt.Errorf("%s: vocab_size %d", path, c.VocabSize)
	case c.Hidden <= 0 || c.Hidden > 1<<16 || c.Heads <= 0 || c.Hidden%c.Heads != 0:
		return c, fmt.Errorf("%s: hidden size %d over %d attention heads: want a positive multiple", path, c.Hidden, c.Heads)
	case c.Layers <= 0 || c.Layers > 1024 || c.Intermediate <= 0 || c.Intermediate > 1<<18:
		return c, fmt.Errorf("%s: %d layers of intermediate size %d", path, c.Layers, c.Intermediate)
	case c.MaxPositions <= 0 || c.MaxPositions > 1<<20 || c.TypeVocab < 0 || c.TypeVocab > 1<<10 || c.MaxLength() < 4:
		return c, fmt.Errorf("%s: max_position_embeddings %d, type_vocab_size %d", path, c.MaxPositions, c.TypeVocab)
	case !(c.LayerNormEps > 0 && c.LayerNormEps < 1):
		return c, fmt.Errorf("%s: layer_norm_eps %v", path, c.LayerNormEps)
	case !slices.Contains([]string{"gelu", "gelu_python"}, c.Activation):
		return c, fmt.Errorf("%s: activation %q: xp implements gelu (exact)", path, c.Activation)
	case cmp.Or(str("position_embedding_type"), "absolute") != "absolute":
		return c, fmt.Errorf("%s: position_embedding_type %q: xp implements absolute position embeddings", path, str("position_embedding_type"))
	case string(raw["sinusoidal_pos_embds"]) == "true":
		return c, fmt.Errorf("%s: sinusoidal_pos_embds true: Hugging Face keeps such position embeddings fixed, and xp trains its own", path)
	}
	b, err = xio.ReadFileMax(filepath.Join(dir, "tokenizer_config.json"), xio.MaxConfig)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return c, err
	}
	if err == nil {
		var tc struct {
			DoLowerCase      *bool `json:"do_lower_case"`
			StripAccents     *bool `json:"strip_accents"`
			TokenizeCJKChars *bool `json:"tokenize_chinese_chars"`
		}
		if err := json.Unmarshal(b, &tc); err != nil {
			return c, fmt.Errorf("%s: %v", filepath.Join(dir, "tokenizer_config.json"), err)
		}
		if err := unique(filepath.Join(dir, "tokenizer_config.json"), b); err != nil {
			return c, err
		}
		if tc.DoLowerCase != nil {
			c.DoLowerCase = *tc.DoLowerCase
		}
		c.StripAccents = tc.StripAccents
		if tc.TokenizeCJKChars != nil {
			c.TokenizeCJKChars = *tc.TokenizeCJKChars
		}
	}
	return c, nil
}

// unique refuses a JSON file that gives a name twice in one object:
// encoding/json keeps the last without a word, where another reader may
// keep the first.
func unique(path string, b []byte) error {
	if name, dup, _ := jsondup.First(b); dup {
		return fmt.Errorf("%s: %q is given twice in one object: which one is meant is not clear", path, name)
	}
	return nil
}
