package hf

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/xp-nlp/xp/internal/xio"
)

// readTokenizerJSON reads dir/tokenizer.json, the one file a fast
// tokenizer's save_pretrained writes (and all some checkpoints ship): its
// model — WordPiece (vocab, "[UNK]", continuing prefix "##",
// max_input_chars_per_word) with its BertNormalizer's lower casing,
// accent stripping and CJK splitting, or byte-level BPE (vocab, merges
// as "a b" strings or [a, b] pairs) with its ByteLevel pre-tokenizer's
// add_prefix_space — and refuses, naming it, what xp's tokenizers do
// not implement.
func readTokenizerJSON(dir string, cfg Config) (Tokenizer, error) {
	path := filepath.Join(dir, "tokenizer.json")
	b, err := xio.ReadFileMax(path, 64<<20)
	if err != nil {
		return nil, err
	}
	var tj struct {
		Normalizer *struct {
			Type               string `json:"type"`
			Lowercase          *bool  `json:"lowercase"`
			StripAccents       *bool  `json:"strip_accents"`
			HandleChineseChars *bool  `json:"handle_chinese_chars"`
		} `json:"normalizer"`
		PreTokenizer *struct {
			Type           string `json:"type"`
			AddPrefixSpace bool   `json:"add_prefix_space"`
		} `json:"pre_tokenizer"`
		Model struct {
			Type                    string            `json:"type"`
			Vocab                   json.RawMessage   `json:"vocab"` // read once the type is known (Unigram's is a list)
			Merges                  []json.RawMessage `json:"merges"`
			UnkToken                *string           `json:"unk_token"`
			ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
			MaxInputCharsPerWord    int               `json:"max_input_chars_per_word"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, fmt.Errorf("%s: not a tokenizer.json: %v", path, err)
	}
	m := tj.Model
	var vocab map[string]int
	if m.Type == "WordPiece" || m.Type == "BPE" {
		if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
			return nil, fmt.Errorf("%s: model.vocab is not an object of pieces and ids: %v", path, err)
		}
	}
	switch {
	case m.Type == "WordPiece" && cfg.ModelType != "roberta":
		if p := m.ContinuingSubwordPrefix; p != nil && *p != "##" {
			return nil, fmt.Errorf("%s: continuing_subword_prefix %q: xp's WordPiece continues with ##", path, *p)
		}
		if m.UnkToken != nil && *m.UnkToken != "[UNK]" {
			return nil, fmt.Errorf("%s: unk_token %q: xp's WordPiece's is [UNK]", path, *m.UnkToken)
		}
		if n := tj.Normalizer; n != nil {
			if n.Type != "BertNormalizer" {
				return nil, fmt.Errorf("%s: normalizer %s: xp implements BERT's (BertNormalizer)", path, n.Type)
			}
			if n.Lowercase != nil {
				cfg.DoLowerCase = *n.Lowercase
			}
			cfg.StripAccents = n.StripAccents
			if n.HandleChineseChars != nil {
				cfg.TokenizeCJKChars = *n.HandleChineseChars
			}
		}
		words := make([]string, len(vocab))
		for p, id := range vocab {
			if id < 0 || id >= len(words) || words[id] != "" {
				return nil, fmt.Errorf("%s: piece %q has id %d: the vocabulary's ids are not 0…%d, once each", path, p, id, len(words)-1)
			}
			words[id] = p
		}
		w, err := newWordPiece(path, words, cfg)
		if err != nil {
			return nil, err
		}
		if m.MaxInputCharsPerWord > 0 {
			w.MaxWordChars = m.MaxInputCharsPerWord
		}
		w.files = []string{"tokenizer.json"}
		return w, nil
	case m.Type == "BPE" && cfg.ModelType == "roberta":
		if pt := tj.PreTokenizer; pt == nil || pt.Type != "ByteLevel" {
			return nil, fmt.Errorf("%s: a BPE model without a ByteLevel pre-tokenizer: xp implements byte-level BPE (RoBERTa's)", path)
		}
		merges := make([][2]string, len(m.Merges))
		for i, raw := range m.Merges {
			var s string
			var pair []string
			switch {
			case json.Unmarshal(raw, &s) == nil:
				a, c, ok := splitMerge(s)
				if !ok {
					return nil, fmt.Errorf("%s: merge %d, %q, is not two pieces and one space", path, i, s)
				}
				merges[i] = [2]string{a, c}
			case json.Unmarshal(raw, &pair) == nil && len(pair) == 2 && pair[0] != "" && pair[1] != "":
				merges[i] = [2]string{pair[0], pair[1]}
			default:
				return nil, fmt.Errorf("%s: merge %d, %s, is neither \"a b\" nor [a, b]", path, i, raw)
			}
		}
		bpe, err := newByteBPE(path, vocab, merges, cfg)
		if err != nil {
			return nil, err
		}
		bpe.PrefixSpace, bpe.files = tj.PreTokenizer.AddPrefixSpace, []string{"tokenizer.json"}
		return bpe, nil
	}
	return nil, fmt.Errorf("%s: a %s model for a %s checkpoint: xp reads WordPiece (BERT, DistilBERT) and byte-level BPE (RoBERTa)", path, m.Type, cfg.ModelType)
}
