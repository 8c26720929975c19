package hf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Tokenizer turns text into a checkpoint's pieces and ids, as the
// checkpoint's own tokenizer does: WordPiece for BERT and DistilBERT,
// byte-level BPE for RoBERTa (ReadTokenizer picks by model_type).
type Tokenizer interface {
	// Tokenize returns text's pieces.
	Tokenize(text string) []string
	// Encode returns the ids of a (and b where not nil) framed by the
	// checkpoint's special pieces, cut to maxLen ids longest text
	// first, their token types, and how many pieces the cut dropped.
	Encode(a string, b *string, maxLen int) (ids, types []int, dropped int)
	// ID is a piece's id, Piece an id's piece ("" for none).
	ID(piece string) (int, bool)
	Piece(id int) string
	// Special are the unknown and padding pieces; Framing the special
	// ids Encode adds around one text or a pair.
	Special() (unk, pad string)
	Framing(pair bool) int
	// Files are the files it was read from, in the checkpoint folder.
	Files() []string
}

// ReadTokenizer reads the tokenizer of the checkpoint in dir for its
// config: vocab.txt for BERT and DistilBERT, vocab.json and merges.txt
// for RoBERTa, or, where those are absent, tokenizer.json (a fast
// tokenizer's file: readTokenizerJSON).
func ReadTokenizer(dir string, cfg Config) (Tokenizer, error) {
	own := []string{"vocab.txt"}
	if cfg.ModelType == "roberta" {
		own = []string{"vocab.json", "merges.txt"}
	}
	if !exists(filepath.Join(dir, own[0])) {
		if exists(filepath.Join(dir, "tokenizer.json")) {
			return readTokenizerJSON(dir, cfg)
		}
		return nil, fmt.Errorf("%s: no tokenizer: neither %s nor tokenizer.json (save_pretrained writes them with the model)", dir, strings.Join(own, " and "))
	}
	if cfg.ModelType == "roberta" {
		return ReadByteBPE(dir, cfg)
	}
	return ReadWordPiece(dir, cfg)
}

// Weights is the path of the checkpoint's weights, model.safetensors, or
// an error that says what to do where the folder has only
// pytorch_model.bin (a Python pickle, which xp does not unpickle).
func Weights(dir string) (string, error) {
	p := filepath.Join(dir, "model.safetensors")
	switch {
	case exists(p):
		return p, nil
	case exists(filepath.Join(dir, "pytorch_model.bin")):
		return "", fmt.Errorf("%s: no model.safetensors, only pytorch_model.bin, a Python pickle that xp does not read: save the checkpoint as safetensors (in Python, AutoModel.from_pretrained(DIR).save_pretrained(DIR, safe_serialization=True), which transformers ≥ 4.35 does by default)", dir)
	}
	return "", fmt.Errorf("%s: no model.safetensors (save_pretrained writes it with config.json)", dir)
}

// truncate cuts pieces from the end of the longer of a and b, from b's
// where they are as long (Hugging Face's "longest_first"), until they
// hold at most room pieces together; dropped counts the pieces cut.
func truncate(a, b []string, room int) (ta, tb []string, dropped int) {
	for len(a)+len(b) > room && len(a)+len(b) > 0 {
		if len(a) > len(b) {
			a = a[:len(a)-1]
		} else {
			b = b[:len(b)-1]
		}
		dropped++
	}
	return a, b, dropped
}

// OpenWeights opens the checkpoint's weights (Weights: model.safetensors
// or the error that says what to do).
func OpenWeights(dir string) (*Safetensors, error) {
	p, err := Weights(dir)
	if err != nil {
		return nil, err
	}
	return OpenSafetensors(p)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Special are WordPiece's unknown and padding pieces.
func (w *WordPiece) Special() (unk, pad string) { return w.Unk, "[PAD]" }

// Framing is [CLS] a [SEP], or [CLS] a [SEP] b [SEP].
func (w *WordPiece) Framing(pair bool) int {
	if pair {
		return 3
	}
	return 2
}

// Files are the files WordPiece was read from.
func (w *WordPiece) Files() []string {
	if w.files == nil {
		return []string{"vocab.txt"}
	}
	return w.files
}

// Special are byte-level BPE's unknown and padding pieces.
func (b *ByteBPE) Special() (unk, pad string) { return b.Unk, b.Pad }

// Framing is <s> a </s>, or <s> a </s></s> b </s>.
func (b *ByteBPE) Framing(pair bool) int {
	if pair {
		return 4
	}
	return 2
}

// Files are the files ByteBPE was read from.
func (b *ByteBPE) Files() []string {
	if b.files == nil {
		return []string{"vocab.json", "merges.txt"}
	}
	return b.files
}

// Piece is the id's piece ("" for none).
func (w *WordPiece) Piece(id int) string {
	if id < 0 || id >= len(w.Words) {
		return ""
	}
	return w.Words[id]
}

// Piece is the id's piece ("" for none).
func (b *ByteBPE) Piece(id int) string {
	if b.pieces == nil {
		b.pieces = map[int]string{}
		for p, i := range b.Vocab {
			b.pieces[i] = p
		}
	}
	return b.pieces[id]
}
