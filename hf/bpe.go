package hf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/xp-nlp/xp/internal/xio"
)

// ByteBPE is RoBERTa's tokenizer as published (Hugging Face's
// RobertaTokenizer, GPT-2's byte-level BPE): the text split by GPT-2's
// pattern (contractions, runs of letters, of digits, of other symbols,
// each with the space before it, and whitespace), each piece's UTF-8
// bytes mapped to printable characters (bytesToUnicode: a space is "Ġ"),
// then merged pair by pair in the order of merges.txt, the lowest-ranked
// pair first. Every byte has a piece, so no text is unknown; a merged
// piece missing from vocab.json (a damaged file) reads as Unk. It keeps
// a cache of the words it has pieced: not for use by several goroutines
// at once.
type ByteBPE struct {
	Vocab map[string]int
	ranks map[[2]string]int
	// Special pieces: BOS/CLS, EOS/SEP, padding and unknown.
	BOS, EOS, Pad, Unk string
	cache              map[string][]string
	pieces             map[int]string // by id, made on first use (Piece)
	// PrefixSpace puts a space before a text that has none, so that its
	// first word is pieced as the others are (tokenizer.json's
	// add_prefix_space; RoBERTa's default is false).
	PrefixSpace bool
	files       []string // read from (nil: vocab.json, merges.txt)
}

// ID is a piece's id.
func (b *ByteBPE) ID(tok string) (int, bool) {
	id, ok := b.Vocab[tok]
	return id, ok
}

// ReadByteBPE reads dir/vocab.json (piece → id) and dir/merges.txt (one
// merge "a b" per line, in rank order, after an optional "#version"
// line), as save_pretrained writes them for RoBERTa.
func ReadByteBPE(dir string, cfg Config) (*ByteBPE, error) {
	vpath, mpath := filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt")
	vb, err := xio.ReadFileMax(vpath, 64<<20)
	if err != nil {
		return nil, err
	}
	vocab := map[string]int{}
	if err := json.Unmarshal(vb, &vocab); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of pieces and ids: %v", vpath, err)
	}
	if err := unique(vpath, vb); err != nil {
		return nil, err
	}
	if err := checkBPEVocab(vpath, vocab, cfg); err != nil {
		return nil, err
	}
	mb, err := xio.ReadFileMax(mpath, 64<<20)
	if err != nil {
		return nil, err
	}
	var merges [][2]string
	sc := bufio.NewScanner(bytes.NewReader(mb))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimRight(sc.Text(), "\r")
		if l == "" || (line == 1 && strings.HasPrefix(l, "#version")) {
			continue
		}
		a, c, ok := splitMerge(l)
		if !ok {
			return nil, fmt.Errorf("%s:%d: %q is not a merge (two pieces and one space)", mpath, line, l)
		}
		merges = append(merges, [2]string{a, c})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", mpath, err)
	}
	return newByteBPE(vpath, vocab, merges, cfg)
}

// splitMerge splits a merge "a b" into its two pieces.
func splitMerge(l string) (a, b string, ok bool) {
	a, b, ok = strings.Cut(l, " ")
	return a, b, ok && a != "" && b != "" && !strings.Contains(b, " ")
}

// checkBPEVocab refuses a vocabulary without RoBERTa's special pieces or
// with an id outside config.json's vocab_size.
func checkBPEVocab(path string, vocab map[string]int, cfg Config) error {
	for _, s := range []string{"<s>", "</s>", "<pad>", "<unk>"} {
		if _, ok := vocab[s]; !ok {
			return fmt.Errorf("%s: no %s piece: not a RoBERTa vocabulary", path, s)
		}
	}
	for p, id := range vocab {
		if id < 0 || (cfg.VocabSize > 0 && id >= cfg.VocabSize) {
			return fmt.Errorf("%s: piece %q has id %d, outside config.json's vocab_size %d", path, p, id, cfg.VocabSize)
		}
	}
	return nil
}

// newByteBPE is the tokenizer of vocab (piece → id) and merges (in rank
// order), read from path, checked against cfg.
func newByteBPE(path string, vocab map[string]int, merges [][2]string, cfg Config) (*ByteBPE, error) {
	b := &ByteBPE{Vocab: vocab, ranks: map[[2]string]int{}, BOS: "<s>", EOS: "</s>", Pad: "<pad>", Unk: "<unk>", cache: map[string][]string{}}
	if err := checkBPEVocab(path, vocab, cfg); err != nil {
		return nil, err
	}
	for _, m := range merges {
		if _, dup := b.ranks[m]; !dup {
			b.ranks[m] = len(b.ranks)
		}
	}
	return b, nil
}

// byteChars is GPT-2's bytes_to_unicode: each byte's printable stand-in.
// The printable bytes of Latin-1 stand for themselves; the others take
// the code points from 256 up, in byte order.
var byteChars = func() [256]rune {
	var m [256]rune
	n := 0
	for c := 0; c < 256; c++ {
		if ('!' <= c && c <= '~') || ('¡' <= c && c <= '¬') || ('®' <= c && c <= 'ÿ') {
			m[c] = rune(c)
		} else {
			m[c] = rune(256 + n)
			n++
		}
	}
	return m
}()

// ByteAlphabet is the 256 one-character pieces that stand for the bytes,
// in byte order: the start of every byte-level vocabulary.
func ByteAlphabet() []string {
	out := make([]string, 256)
	for i, r := range byteChars {
		out[i] = string(r)
	}
	return out
}

// Tokenize returns text's pieces.
func (b *ByteBPE) Tokenize(text string) []string {
	if b.PrefixSpace && !strings.HasPrefix(text, " ") {
		text = " " + text
	}
	var out []string
	for _, w := range preTokenize(text) {
		var s strings.Builder
		for _, c := range []byte(w) {
			s.WriteRune(byteChars[c])
		}
		out = append(out, b.bpe(s.String())...)
	}
	return out
}

// bpe merges word's characters by rank, the lowest-ranked adjacent pair
// first, every occurrence of it left to right, until no pair has a rank.
func (b *ByteBPE) bpe(word string) []string {
	if p, ok := b.cache[word]; ok {
		return p
	}
	var parts []string
	for _, r := range word {
		parts = append(parts, string(r))
	}
	for len(parts) > 1 {
		best, at := -1, [2]string{}
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := b.ranks[[2]string{parts[i], parts[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, [2]string{parts[i], parts[i+1]}
			}
		}
		if best < 0 {
			break
		}
		merged := parts[:0:0]
		for i := 0; i < len(parts); i++ {
			if i+1 < len(parts) && parts[i] == at[0] && parts[i+1] == at[1] {
				merged = append(merged, at[0]+at[1])
				i++
				continue
			}
			merged = append(merged, parts[i])
		}
		parts = merged
	}
	if len(b.cache) < 1<<16 { // bounded: a corpus's long tail need not stay
		b.cache[word] = parts
	}
	return parts
}

// contractions are the suffixes GPT-2's pattern splits off first.
var contractions = []string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}

// preTokenize splits text as GPT-2's pattern
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// does: the alternatives tried in order at each position, the longest
// run each can take; a run of whitespace before a non-space keeps its
// last character for the piece after it.
func preTokenize(text string) []string {
	var out []string
	isSpace := unicode.IsSpace
	class := func(r rune) int { // 1 letter, 2 number, 3 other, 0 space
		switch {
		case unicode.IsLetter(r):
			return 1
		case unicode.IsNumber(r):
			return 2
		case isSpace(r):
			return 0
		}
		return 3
	}
	for i := 0; i < len(text); {
		rest := text[i:]
		if c := contraction(rest); c != "" {
			out, i = append(out, c), i+len(c)
			continue
		}
		r, _ := utf8.DecodeRuneInString(rest)
		start := i
		if r == ' ' && len(rest) > 1 {
			if r2, _ := utf8.DecodeRuneInString(rest[1:]); class(r2) != 0 {
				r, i = r2, i+1 // " ?" then the run
			}
		}
		if k := class(r); k != 0 {
			j := i
			for j < len(text) {
				rr, m := utf8.DecodeRuneInString(text[j:])
				if class(rr) != k {
					break
				}
				j += m
			}
			out, i = append(out, text[start:j]), j
			continue
		}
		// Whitespace: the run, less its last character where a
		// non-space follows and the run is longer than one.
		j := i
		var last int
		for j < len(text) {
			rr, m := utf8.DecodeRuneInString(text[j:])
			if !isSpace(rr) {
				break
			}
			last = m
			j += m
		}
		if j < len(text) && j-i > last {
			j -= last
		}
		out, i = append(out, text[i:j]), j
	}
	return out
}

// contraction is the contraction rest starts with, or "".
func contraction(rest string) string {
	for _, c := range contractions {
		if strings.HasPrefix(rest, c) {
			return c
		}
	}
	return ""
}

// Encode returns the ids of <s> a </s> (and </s> b </s> after it when b
// is not nil), truncated to maxLen ids by dropping pieces from the end
// of the longer text first ("longest_first"), the token types (all 0:
// RoBERTa has one) and how many pieces were dropped.
func (b *ByteBPE) Encode(a string, second *string, maxLen int) (ids, types []int, dropped int) {
	pa := b.Tokenize(a)
	var pb []string
	special := 2
	if second != nil {
		pb = b.Tokenize(*second)
		special = 4
	}
	pa, pb, dropped = truncate(pa, pb, maxLen-special)
	id := func(p string) int {
		if i, ok := b.Vocab[p]; ok {
			return i
		}
		return b.Vocab[b.Unk]
	}
	ids = append(ids, id(b.BOS))
	for _, p := range pa {
		ids = append(ids, id(p))
	}
	ids = append(ids, id(b.EOS))
	if second != nil {
		ids = append(ids, id(b.EOS))
		for _, p := range pb {
			ids = append(ids, id(p))
		}
		ids = append(ids, id(b.EOS))
	}
	return ids, make([]int, len(ids)), dropped
}
