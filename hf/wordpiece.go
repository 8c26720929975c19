package hf

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/xp-nlp/xp/internal/xio"
)

// WordPiece is BERT's tokenizer as published (Hugging Face's
// BertTokenizer): the basic tokenizer (control characters dropped,
// whitespace normalised, CJK characters split apart, optional lower
// casing and accent stripping, punctuation split off) and then greedy
// longest-match-first word pieces, continuation pieces prefixed "##", a
// word with no decomposition or longer than MaxWordChars characters
// becoming [UNK].
type WordPiece struct {
	Vocab        map[string]int
	Words        []string // by id
	Lower        bool
	StripAccents bool
	SplitCJK     bool
	// MaxWordChars: a longer word is [UNK] (BERT: 100).
	MaxWordChars int
	Unk          string
	files        []string // read from (nil: vocab.txt)
}

// Special token names and their ids in the vocabulary.
func (w *WordPiece) ID(tok string) (int, bool) {
	id, ok := w.Vocab[tok]
	return id, ok
}

// ReadWordPiece reads dir/vocab.txt (one piece per line, its id its
// line's index) and sets the tokenizer's options from cfg.
func ReadWordPiece(dir string, cfg Config) (*WordPiece, error) {
	path := filepath.Join(dir, "vocab.txt")
	b, err := xio.ReadFileMax(path, 64<<20)
	if err != nil {
		return nil, err
	}
	var words []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		words = append(words, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return newWordPiece(path, words, cfg)
}

// newWordPiece is the tokenizer of the pieces words (id i is words[i];
// a piece listed twice keeps its first id), read from path, with the
// options of cfg.
func newWordPiece(path string, words []string, cfg Config) (*WordPiece, error) {
	w := &WordPiece{Vocab: map[string]int{}, Words: words, Lower: cfg.DoLowerCase, StripAccents: cfg.DoLowerCase, SplitCJK: cfg.TokenizeCJKChars, MaxWordChars: 100, Unk: "[UNK]"}
	if cfg.StripAccents != nil {
		w.StripAccents = *cfg.StripAccents
	}
	for i, tok := range words {
		if _, dup := w.Vocab[tok]; !dup {
			w.Vocab[tok] = i
		}
	}
	for _, s := range []string{"[UNK]", "[CLS]", "[SEP]", "[PAD]"} {
		if _, ok := w.Vocab[s]; !ok {
			return nil, fmt.Errorf("%s: no %s piece: not a BERT vocabulary", path, s)
		}
	}
	if cfg.VocabSize > 0 && len(w.Words) > cfg.VocabSize {
		return nil, fmt.Errorf("%s: %d pieces, but config.json's vocab_size is %d", path, len(w.Words), cfg.VocabSize)
	}
	return w, nil
}

// Tokenize returns text's word pieces.
func (w *WordPiece) Tokenize(text string) []string {
	var out []string
	for _, word := range w.basic(text) {
		out = append(out, w.pieces(word)...)
	}
	return out
}

// basic is BERT's BasicTokenizer.
func (w *WordPiece) basic(text string) []string {
	var b strings.Builder
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
			continue
		case isWhitespace(r):
			b.WriteByte(' ')
		case w.SplitCJK && isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	var out []string
	for _, tok := range strings.Fields(b.String()) {
		if w.Lower {
			tok = strings.ToLower(tok)
		}
		if w.StripAccents {
			tok = stripAccents(tok)
		}
		out = append(out, splitPunct(tok)...)
	}
	return out
}

// pieces is greedy longest-match-first WordPiece of one word.
func (w *WordPiece) pieces(word string) []string {
	chars := []rune(word)
	if len(chars) > w.MaxWordChars {
		return []string{w.Unk}
	}
	var out []string
	for start := 0; start < len(chars); {
		end, found := len(chars), ""
		for ; end > start; end-- {
			sub := string(chars[start:end])
			if start > 0 {
				sub = "##" + sub
			}
			if _, ok := w.Vocab[sub]; ok {
				found = sub
				break
			}
		}
		if found == "" {
			return []string{w.Unk}
		}
		out = append(out, found)
		start = end
	}
	return out
}

// Encode returns the ids of [CLS] a [SEP] (and b [SEP] when b is not
// nil), truncated to maxLen ids by dropping pieces from the end of the
// longer text first, from b's where they are as long (Hugging Face's
// "longest_first"), the token types
// (0 for a's segment, 1 for b's) and how many pieces were dropped.
func (w *WordPiece) Encode(a string, b *string, maxLen int) (ids, types []int, dropped int) {
	pa := w.Tokenize(a)
	var pb []string
	special := 2
	if b != nil {
		pb = w.Tokenize(*b)
		special = 3
	}
	pa, pb, dropped = truncate(pa, pb, maxLen-special)
	id := func(p string) int {
		if i, ok := w.Vocab[p]; ok {
			return i
		}
		return w.Vocab[w.Unk]
	}
	ids = append(ids, id("[CLS]"))
	for _, p := range pa {
		ids = append(ids, id(p))
	}
	ids = append(ids, id("[SEP]"))
	types = make([]int, len(ids))
	if b != nil {
		for _, p := range pb {
			ids, types = append(ids, id(p)), append(types, 1)
		}
		ids, types = append(ids, id("[SEP]")), append(types, 1)
	}
	return ids, types, dropped
}

// stripAccents removes combining marks after canonical decomposition.
func stripAccents(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// splitPunct splits punctuation characters off as tokens of their own.
func splitPunct(s string) []string {
	var out []string
	var cur []rune
	for _, r := range s {
		if isPunct(r) {
			if len(cur) > 0 {
				out = append(out, string(cur))
				cur = cur[:0]
			}
			out = append(out, string(r))
			continue
		}
		cur = append(cur, r)
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}

// isWhitespace: space, tab, newline, carriage return and Unicode Zs.
func isWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r)
}

// isControl: categories Cc and Cf, except the whitespace among them.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf)
}

// isPunct: every non-alphanumeric ASCII character that is not a space
// or control (BERT counts "^", "$" and "`" in), and Unicode P*.
func isPunct(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK: the CJK Unified Ideographs blocks BERT splits apart (not
// Hangul, Hiragana or Katakana).
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}
