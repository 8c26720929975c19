package hf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPreTokenize: GPT-2's pattern, case by case: a word takes the space
// before it, contractions split off, runs of digits and of symbols are
// pieces of their own, and a run of whitespace before a word leaves its
// last space to the word.
func TestPreTokenize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"I'm here  now", []string{"I", "'m", " here", " ", " now"}},
		{"don't", []string{"don", "'t"}},
		{"a\n\nb", []string{"a", "\n", "\n", "b"}},
		{"Hello!!! 123abc", []string{"Hello", "!!!", " 123", "abc"}},
		{" leading", []string{" leading"}},
		{"end  ", []string{"end", "  "}},
		{"café, ok", []string{"café", ",", " ok"}},
		{"", nil},
	} {
		if got := preTokenize(c.in); !slices.Equal(got, c.want) {
			t.Errorf("preTokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestByteChars: GPT-2's stand-ins for bytes (a space is Ġ, a newline Ċ,
// é's two bytes Ã©), one per byte, all distinct.
func TestByteChars(t *testing.T) {
	seen := map[rune]bool{}
	for _, r := range byteChars {
		if seen[r] {
			t.Fatalf("byte stand-in %q twice", r)
		}
		seen[r] = true
	}
	for in, want := range map[string]string{" ": "Ġ", "\n": "Ċ", "é": "Ã©", "a": "a"} {
		var b strings.Builder
		for _, c := range []byte(in) {
			b.WriteRune(byteChars[c])
		}
		if b.String() != want {
			t.Errorf("%q maps to %q, want %q", in, b.String(), want)
		}
	}
}

// writeBPE writes a toy RoBERTa tokenizer: the special pieces, every
// byte's stand-in, and merges building "hello" and "Ġworld".
func writeBPE(t *testing.T) string {
	dir := t.TempDir()
	vocab := map[string]int{"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
	add := func(p string) {
		if _, ok := vocab[p]; !ok {
			vocab[p] = len(vocab)
		}
	}
	for _, r := range byteChars {
		add(string(r))
	}
	merges := []string{"h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "Ġwor l", "Ġworl d"}
	for _, m := range merges {
		add(strings.ReplaceAll(m, " ", ""))
	}
	b, _ := json.Marshal(vocab)
	if err := os.WriteFile(filepath.Join(dir, "vocab.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "merges.txt"), []byte("#version: 0.2\n"+strings.Join(merges, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestByteBPE: merges apply lowest rank first until none applies; a
// word without merges stays in bytes; <s> a </s> and, for a pair,
// <s> a </s></s> b </s>, cut longest first.
func TestByteBPE(t *testing.T) {
	b, err := ReadByteBPE(writeBPE(t), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string][]string{
		"hello world": {"hello", "Ġworld"},
		"hello xyz":   {"hello", "Ġ", "x", "y", "z"},
		"hell":        {"hell"},
		"helo":        {"he", "l", "o"},
		"é":           {"Ã", "©"},
	} {
		if got := b.Tokenize(in); !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %q, want %q", in, got, want)
		}
	}
	id := func(p string) int { return b.Vocab[p] }
	ids, types, dropped := b.Encode("hello world", nil, 16)
	if want := []int{0, id("hello"), id("Ġworld"), 2}; !slices.Equal(ids, want) || dropped != 0 || !slices.Equal(types, []int{0, 0, 0, 0}) {
		t.Errorf("Encode = %v %v %d, want %v", ids, types, dropped, want)
	}
	second := "x y"
	ids, _, dropped = b.Encode("hello world", &second, 7)
	// 4 special ids, 2 + 3 pieces: two dropped, both the second text's
	// (the longer, then the one cut where they tie, as Hugging Face's
	// longest_first does).
	if want := []int{0, id("hello"), id("Ġworld"), 2, 2, id("x"), 2}; !slices.Equal(ids, want) || dropped != 2 {
		t.Errorf("pair Encode = %v (%d dropped), want %v", ids, dropped, want)
	}
}

// TestByteBPEBadFiles: a vocabulary without RoBERTa's special pieces, or
// a merges line that is not two pieces, is one clear error.
func TestByteBPEBadFiles(t *testing.T) {
	dir := writeBPE(t)
	os.WriteFile(filepath.Join(dir, "merges.txt"), []byte("#version: 0.2\nh e\nthree parts here\n"), 0o644)
	if _, err := ReadByteBPE(dir, Config{}); err == nil || !strings.Contains(err.Error(), "merges.txt:3: ") {
		t.Errorf("bad merge: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(`{"a": 0}`), 0o644)
	if _, err := ReadByteBPE(dir, Config{}); err == nil || !strings.Contains(err.Error(), "not a RoBERTa vocabulary") {
		t.Errorf("no special pieces: %v", err)
	}
}

// FuzzByteBPE: whatever a merges.txt holds, it is read or refused with
// an error, never a panic; and whatever the text, its pieces are GPT-2's
// pattern's split of it (they concatenate back to the text) and every
// piece has an id.
func FuzzByteBPE(f *testing.F) {
	f.Add("#version: 0.2\nh e\nl l\n", "hello  world's\n\tend")
	f.Add("a b c\n", "")
	f.Add("", "\xff\xfe caf\u00e9 123!!")
	f.Fuzz(func(t *testing.T, merges, text string) {
		dir := writeBPE(t)
		if err := os.WriteFile(filepath.Join(dir, "merges.txt"), []byte(merges), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := ReadByteBPE(dir, Config{})
		if err != nil {
			return
		}
		if got := strings.Join(preTokenize(text), ""); got != text {
			t.Fatalf("pieces of %q join to %q", text, got)
		}
		ids, _, _ := b.Encode(text, nil, 1<<20)
		for _, id := range ids {
			if b.Piece(id) == "" {
				t.Fatalf("id %d of %q has no piece", id, text)
			}
		}
	})
}
