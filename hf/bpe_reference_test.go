package hf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestByteBPEAgainstGPT2: on real GPT-2 merges (RoBERTa's), xp's
// byte-level BPE gives the pieces OpenAI's encoder gives
// (testdata/gpt2_reference.json, written by gpt2_reference.js from
// gpt-3-encoder): contractions, runs of spaces, tabs and newlines, other
// scripts, digits of several kinds, emoji split inside their bytes,
// repeated pairs, and words long enough for dozens of merges. The merges
// are those that competed at some step of those texts, in GPT-2's rank
// order, read through ReadByteBPE as a RoBERTa folder.
func TestByteBPEAgainstGPT2(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "gpt2_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Merges [][2]string
		Cases  []struct {
			Text   string
			Pieces []string
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Merges) < 500 || len(ref.Cases) < 50 {
		t.Fatalf("%d merges and %d cases: the reference is not the one written", len(ref.Merges), len(ref.Cases))
	}
	vocab := map[string]int{}
	add := func(p string) {
		if _, ok := vocab[p]; !ok {
			vocab[p] = len(vocab)
		}
	}
	for _, p := range []string{"<s>", "<pad>", "</s>", "<unk>"} {
		add(p)
	}
	for _, p := range ByteAlphabet() {
		add(p)
	}
	var merges strings.Builder
	merges.WriteString("#version: 0.2\n")
	for _, m := range ref.Merges {
		add(m[0] + m[1])
		merges.WriteString(m[0] + " " + m[1] + "\n")
	}
	dir := t.TempDir()
	vb, err := json.Marshal(vocab)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.json"), vb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "merges.txt"), []byte(merges.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadByteBPE(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	merged := 0
	for _, c := range ref.Cases {
		got := b.Tokenize(c.Text)
		if !slices.Equal(got, c.Pieces) {
			t.Errorf("Tokenize(%q) = %q, GPT-2's encoder %q", c.Text, got, c.Pieces)
		}
		for _, p := range got {
			if len([]rune(p)) > 1 {
				merged++
			}
		}
		// Every piece is in the vocabulary: no text falls back to <unk>.
		ids, _, _ := b.Encode(c.Text, nil, 1<<20)
		if unk := vocab["<unk>"]; slices.Contains(ids, unk) {
			t.Errorf("Encode(%q) holds <unk>", c.Text)
		}
	}
	if merged < 200 {
		t.Errorf("%d merged pieces over the reference: the merges did not apply", merged)
	}
}
