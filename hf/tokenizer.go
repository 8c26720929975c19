package hf

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
// for RoBERTa.
func ReadTokenizer(dir string, cfg Config) (Tokenizer, error) {
	if cfg.ModelType == "roberta" {
		return ReadByteBPE(dir, cfg)
	}
	return ReadWordPiece(dir, cfg)
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

// Files are the file WordPiece reads.
func (w *WordPiece) Files() []string { return []string{"vocab.txt"} }

// Special are byte-level BPE's unknown and padding pieces.
func (b *ByteBPE) Special() (unk, pad string) { return b.Unk, b.Pad }

// Framing is <s> a </s>, or <s> a </s></s> b </s>.
func (b *ByteBPE) Framing(pair bool) int {
	if pair {
		return 4
	}
	return 2
}

// Files are the files ByteBPE reads.
func (b *ByteBPE) Files() []string { return []string{"vocab.json", "merges.txt"} }

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
