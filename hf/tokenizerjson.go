package hf

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

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
			CleanText          *bool  `json:"clean_text"`
			Lowercase          *bool  `json:"lowercase"`
			StripAccents       *bool  `json:"strip_accents"`
			HandleChineseChars *bool  `json:"handle_chinese_chars"`
		} `json:"normalizer"`
		PreTokenizer *struct {
			Type           string `json:"type"`
			AddPrefixSpace bool   `json:"add_prefix_space"`
			UseRegex       *bool  `json:"use_regex"`
		} `json:"pre_tokenizer"`
		PostProcessor *postProcessor `json:"post_processor"`
		Model         struct {
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
	if err := unique(path, b); err != nil {
		return nil, err
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
			if n.CleanText != nil && !*n.CleanText {
				return nil, fmt.Errorf("%s: BertNormalizer with clean_text false: xp's always drops control characters and maps whitespace to spaces", path)
			}
			if n.Lowercase != nil {
				cfg.DoLowerCase = *n.Lowercase
			}
			cfg.StripAccents = n.StripAccents
			if n.HandleChineseChars != nil {
				cfg.TokenizeCJKChars = *n.HandleChineseChars
			}
		}
		if pt := tj.PreTokenizer; pt != nil && pt.Type != "BertPreTokenizer" {
			return nil, fmt.Errorf("%s: pre_tokenizer %s: xp's WordPiece splits words as BertPreTokenizer does", path, pt.Type)
		}
		if err := tj.PostProcessor.check(path, "BertProcessing", "[CLS]", "[SEP]", "[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1"); err != nil {
			return nil, err
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
		if u := tj.PreTokenizer.UseRegex; u != nil && !*u {
			return nil, fmt.Errorf("%s: ByteLevel pre-tokenizer with use_regex false: xp splits words with GPT-2's pattern, as RoBERTa's does", path)
		}
		if n := tj.Normalizer; n != nil {
			return nil, fmt.Errorf("%s: normalizer %s: RoBERTa's byte-level BPE has none, and xp applies none", path, n.Type)
		}
		if err := tj.PostProcessor.check(path, "RobertaProcessing", "<s>", "</s>", "<s> $A </s>", "<s> $A </s> </s> $B </s>"); err != nil {
			return nil, err
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

// postProcessor is a tokenizer.json's post_processor: how the special
// pieces frame a text and a pair. xp frames them as BERT and RoBERTa do
// (WordPiece.Encode, ByteBPE.Encode); check refuses, naming it, a file
// that frames them otherwise.
type postProcessor struct {
	Type   string         `json:"type"`
	Sep    []any          `json:"sep"` // BertProcessing, RobertaProcessing: [piece, id]
	Cls    []any          `json:"cls"`
	Single []templatePart `json:"single"` // TemplateProcessing
	Pair   []templatePart `json:"pair"`
}

// templatePart is one piece of a TemplateProcessing template: a special
// piece or a text ("A" or "B"), with its token type.
type templatePart struct {
	SpecialToken *struct {
		ID     string `json:"id"`
		TypeID int    `json:"type_id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID     string `json:"id"`
		TypeID int    `json:"type_id"`
	} `json:"Sequence"`
}

// check accepts no post-processor, the named legacy one framing with cls
// and sep, or a TemplateProcessing whose single and pair templates read
// single and pair (as "[CLS]:0 $A:0 [SEP]:0"; where the wanted templates
// carry no ":type", token types are not compared: RoBERTa has one).
func (p *postProcessor) check(path, legacy, cls, sep, single, pair string) error {
	if p == nil {
		return nil
	}
	switch p.Type {
	case legacy:
		if len(p.Cls) == 0 || len(p.Sep) == 0 || p.Cls[0] != cls || p.Sep[0] != sep {
			return fmt.Errorf("%s: %s with cls %v and sep %v: xp frames a text with %s and %s", path, legacy, p.Cls, p.Sep, cls, sep)
		}
		return nil
	case "TemplateProcessing":
		types := strings.Contains(single, ":")
		render := func(parts []templatePart) string {
			var out []string
			for _, t := range parts {
				var s string
				var typ int
				switch {
				case t.SpecialToken != nil:
					s, typ = t.SpecialToken.ID, t.SpecialToken.TypeID
				case t.Sequence != nil:
					s, typ = "$"+t.Sequence.ID, t.Sequence.TypeID
				default:
					s = "?"
				}
				if types {
					s += fmt.Sprintf(":%d", typ)
				}
				out = append(out, s)
			}
			return strings.Join(out, " ")
		}
		if got := render(p.Single); got != single {
			return fmt.Errorf("%s: TemplateProcessing frames a text as %q: xp frames it as %q", path, got, single)
		}
		if got := render(p.Pair); got != pair {
			return fmt.Errorf("%s: TemplateProcessing frames a pair as %q: xp frames it as %q", path, got, pair)
		}
		return nil
	}
	return fmt.Errorf("%s: post_processor %s: xp frames texts as %s or an equivalent TemplateProcessing does", path, p.Type, legacy)
}
