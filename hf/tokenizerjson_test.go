package hf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeJSON writes v as dir/name.
func writeJSON(t *testing.T, dir, name string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTokenizerJSONWordPiece: a BERT folder with tokenizer.json and no
// vocab.txt tokenizes as the same vocabulary's vocab.txt does, with the
// BertNormalizer's options (lowercase false keeps "Good" cased, so it
// is [UNK] in a lower-case vocabulary), and is checksummed as
// tokenizer.json.
func TestTokenizerJSONWordPiece(t *testing.T) {
	words := strings.Fields("[PAD] [UNK] [CLS] [SEP] [MASK] the film was good bad ##s , .")
	vocab := map[string]int{}
	for i, w := range words {
		vocab[w] = i
	}
	plain := t.TempDir()
	os.WriteFile(filepath.Join(plain, "vocab.txt"), []byte(strings.Join(words, "\n")+"\n"), 0o644)
	want, err := ReadTokenizer(plain, Config{ModelType: "bert", DoLowerCase: true, TokenizeCJKChars: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, lower := range []bool{true, false} {
		dir := t.TempDir()
		writeJSON(t, dir, "tokenizer.json", map[string]any{
			"normalizer": map[string]any{"type": "BertNormalizer", "lowercase": lower, "strip_accents": nil, "handle_chinese_chars": true},
			"model":      map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
		})
		tok, err := ReadTokenizer(dir, Config{ModelType: "bert", DoLowerCase: true, TokenizeCJKChars: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tok.Files(), []string{"tokenizer.json"}) {
			t.Errorf("files %v", tok.Files())
		}
		got, wantPieces := tok.Tokenize("Good films, the film."), want.Tokenize("Good films, the film.")
		if lower && !slices.Equal(got, wantPieces) {
			t.Errorf("lowercase tokenizer.json: %q, vocab.txt: %q", got, wantPieces)
		}
		if !lower && got[0] != "[UNK]" {
			t.Errorf("lowercase false: %q, want Good as [UNK]", got)
		}
	}
	// A piece given twice in the vocabulary: encoding/json kept the last
	// id.
	dir := t.TempDir()
	body := `{"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "the": 1, "the": 2}}}`
	os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(body), 0o644)
	if _, err := ReadTokenizer(dir, Config{ModelType: "bert", DoLowerCase: true}); err == nil || !strings.Contains(err.Error(), `"model.vocab.the" is given twice`) {
		t.Errorf("a piece given twice: %v", err)
	}
}

// TestTokenizerJSONByteBPE: a RoBERTa folder with tokenizer.json alone
// tokenizes as vocab.json and merges.txt do, its merges written as "a b"
// strings or as [a, b] pairs, and add_prefix_space puts a space before
// the text.
func TestTokenizerJSONByteBPE(t *testing.T) {
	ref, err := ReadByteBPE(writeBPE(t), Config{})
	if err != nil {
		t.Fatal(err)
	}
	mergesTxt := []string{"h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "Ġwor l", "Ġworl d"}
	var pairs [][]string
	for _, m := range mergesTxt {
		pairs = append(pairs, strings.Split(m, " "))
	}
	for _, tc := range []struct {
		merges any
		prefix bool
		want   []string
	}{
		{mergesTxt, false, []string{"hello", "Ġworld"}},
		{pairs, false, []string{"hello", "Ġworld"}},
		{mergesTxt, true, []string{"Ġ", "hello", "Ġworld"}},
	} {
		dir := t.TempDir()
		writeJSON(t, dir, "tokenizer.json", map[string]any{
			"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": tc.prefix},
			"model":         map[string]any{"type": "BPE", "vocab": ref.Vocab, "merges": tc.merges},
		})
		tok, err := ReadTokenizer(dir, Config{ModelType: "roberta"})
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Tokenize("hello world"); !slices.Equal(got, tc.want) {
			t.Errorf("merges %T, add_prefix_space %v: %q, want %q", tc.merges, tc.prefix, got, tc.want)
		}
	}
}

// TestTokenizerFilesMissing: a folder without its tokenizer, one whose
// tokenizer.json holds a model xp does not implement, and one with only
// pytorch_model.bin for weights are each one clear line.
func TestTokenizerFilesMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadTokenizer(dir, Config{ModelType: "roberta"}); err == nil || !strings.Contains(err.Error(), "neither vocab.json and merges.txt nor tokenizer.json") {
		t.Errorf("no tokenizer: %v", err)
	}
	writeJSON(t, dir, "tokenizer.json", map[string]any{"model": map[string]any{"type": "Unigram", "vocab": [][]any{{"a", -1.0}}}})
	if _, err := ReadTokenizer(dir, Config{ModelType: "bert"}); err == nil || !strings.Contains(err.Error(), "a Unigram model for a bert checkpoint") {
		t.Errorf("unigram: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "pytorch_model.bin"), []byte("PK"), 0o644)
	if _, err := Weights(dir); err == nil || !strings.Contains(err.Error(), "only pytorch_model.bin") {
		t.Errorf("pickle only: %v", err)
	}
}

// FuzzTokenizerJSON: whatever a tokenizer.json holds, it is read or
// refused with an error, never a panic, and a tokenizer read from it
// encodes text.
func FuzzTokenizerJSON(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"[PAD]":0,"[UNK]":1,"[CLS]":2,"[SEP]":3,"a":4}}}`), "a b")
	f.Add([]byte(`{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"<s>":0,"<pad>":1,"</s>":2,"<unk>":3},"merges":["a b",["c","d"]]}}`), "ab cd")
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"[UNK]":7}}}`), "")
	f.Fuzz(func(t *testing.T, body []byte, text string) {
		for _, typ := range []string{"bert", "roberta"} {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), body, 0o644); err != nil {
				t.Fatal(err)
			}
			tok, err := ReadTokenizer(dir, Config{ModelType: typ})
			if err != nil {
				continue
			}
			tok.Encode(text, &text, 64)
		}
	})
}
