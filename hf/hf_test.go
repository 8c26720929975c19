package hf

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSafetensorsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := map[string]Tensor32{
		"a.weight": {Shape: []int64{2, 3}, Data: []float32{1, -2, 3.5, 0, 1e-8, -7}},
		"b":        {Shape: []int64{}, Data: []float32{42}},
		"empty":    {Shape: []int64{0, 4}, Data: nil},
	}
	if err := WriteSafetensors(&buf, in, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	st, err := OpenSafetensors(writeFile(t, t.TempDir(), "m.safetensors", buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := st.Names(); !reflect.DeepEqual(got, []string{"a.weight", "b", "empty"}) || st.Metadata["format"] != "pt" {
		t.Errorf("names %v, metadata %v", got, st.Metadata)
	}
	for name, want := range in {
		v, shape, err := st.Float32(name)
		if err != nil || !reflect.DeepEqual(shape, want.Shape) || len(v) != len(want.Data) || (len(v) > 0 && !reflect.DeepEqual(v, want.Data)) {
			t.Errorf("%s: %v %v %v, want %v %v", name, v, shape, err, want.Data, want.Shape)
		}
	}
	if _, _, err := st.Float32("nope"); err == nil {
		t.Error("a missing tensor read")
	}
}

// header makes a safetensors file from a raw header and data.
func header(h string, data []byte) []byte {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(h)))
	return append(append(n[:], h...), data...)
}

func TestSafetensorsRefused(t *testing.T) {
	dir := t.TempDir()
	huge := make([]byte, 8)
	binary.LittleEndian.PutUint64(huge, 1<<62)
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"shorter than the length", []byte{1, 2, 3}, "shorter than the 8-byte header length"},
		{"a header claiming more than the file", header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, []byte{0, 0, 0, 0})[:20], "but the file holds"},
		{"a header claiming 2^62 bytes", huge, "at most"},
		{"not JSON", header(`{"a":`, nil), "not a JSON object"},
		{"a tensor past the end", header(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, make([]byte, 8)), `tensor "a" ends at byte 16 of the data, which holds 8`},
		{"a shape that disagrees", header(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), "is 12 bytes, its offsets span 8"},
		{"overlapping tensors", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), "overlap"},
		{"an unknown dtype", header(`{"a":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}}`, make([]byte, 1)), `unknown dtype "F8"`},
		{"an overflowing shape", header(`{"a":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,4]}}`, make([]byte, 4)), "shape"},
		// The second entry won: typed F16 over the first's F32 bytes,
		// the logits were NaN at exit 0.
		{"a tensor named twice", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}}`, make([]byte, 8)), `"a" is named twice in the header`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := OpenSafetensors(writeFile(t, dir, "x.safetensors", c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("got %v, want one line with %q", err, c.want)
			}
		})
	}
}

func TestHalfToFloat(t *testing.T) {
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0001: float32(math.Ldexp(1, -24)), 0x3555: 0.333251953125, 0x8000: float32(math.Copysign(0, -1))} {
		if got := halfToFloat(h); got != want || math.Signbit(float64(got)) != math.Signbit(float64(want)) {
			t.Errorf("halfToFloat(%#04x) = %v, want %v", h, got, want)
		}
	}
	if !math.IsInf(float64(halfToFloat(0x7c00)), 1) || !math.IsNaN(float64(halfToFloat(0x7e00))) {
		t.Error("infinity or NaN")
	}
}

func TestReadConfig(t *testing.T) {
	for _, c := range []struct {
		name, json, want string
		check            func(Config) bool
	}{
		{"bert", `{"model_type":"bert","vocab_size":30522,"hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072,"hidden_act":"gelu","type_vocab_size":2,"id2label":{"0":"neg","1":"pos"}}`, "",
			func(c Config) bool {
				return c.Hidden == 768 && c.TypeVocab == 2 && reflect.DeepEqual(c.Labels, []string{"neg", "pos"}) && c.LayerNormEps == 1e-12
			}},
		{"distilbert", `{"model_type":"distilbert","vocab_size":30522,"dim":768,"n_layers":6,"n_heads":12,"hidden_dim":3072,"activation":"gelu"}`, "",
			func(c Config) bool {
				return c.Hidden == 768 && c.Layers == 6 && c.Intermediate == 3072 && c.TypeVocab == 0
			}},
		{"roberta", `{"model_type":"roberta","vocab_size":50265,"type_vocab_size":1,"layer_norm_eps":1e-5}`, "",
			func(c Config) bool { return c.PadTokenID == 1 && c.TypeVocab == 1 && c.LayerNormEps == 1e-5 }},
		{"gpt2", `{"model_type":"gpt2","architectures":["GPT2LMHeadModel"]}`, `model_type "gpt2" (architectures ["GPT2LMHeadModel"]): xp implements bert, distilbert, roberta`, nil},
		{"no type", `{"hidden_size":8}`, "no model_type", nil},
		{"heads that do not divide", `{"model_type":"bert","vocab_size":10,"hidden_size":10,"num_attention_heads":3}`, "hidden size 10 over 3 attention heads", nil},
		{"tanh-approximate gelu", `{"model_type":"bert","vocab_size":10,"hidden_size":8,"num_attention_heads":2,"hidden_act":"gelu_new"}`, `activation "gelu_new"`, nil},
		{"relative positions", `{"model_type":"bert","vocab_size":10,"hidden_size":8,"num_attention_heads":2,"position_embedding_type":"relative_key"}`, `position_embedding_type "relative_key"`, nil},
		{"absolute positions", `{"model_type":"roberta","vocab_size":10,"hidden_size":8,"num_attention_heads":2,"position_embedding_type":"absolute"}`, "", func(c Config) bool { return c.Hidden == 8 }},
		{"fixed sinusoidal positions", `{"model_type":"distilbert","vocab_size":10,"dim":8,"n_heads":2,"sinusoidal_pos_embds":true}`, "sinusoidal_pos_embds true", nil},
		{"learned positions", `{"model_type":"distilbert","vocab_size":10,"dim":8,"n_heads":2,"sinusoidal_pos_embds":false}`, "", func(c Config) bool { return c.Hidden == 8 }},
		{"a key given twice", `{"model_type":"bert","vocab_size":10,"hidden_size":8,"num_attention_heads":2,"hidden_size":16}`, `"hidden_size" is given twice`, nil},
		{"a label given twice", `{"model_type":"bert","vocab_size":10,"hidden_size":8,"num_attention_heads":2,"id2label":{"0":"neg","0":"pos"}}`, `"id2label.0" is given twice`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "config.json", []byte(c.json))
			cfg, err := ReadConfig(dir)
			switch {
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want %q", err, c.want)
			case c.want == "" && (err != nil || !c.check(cfg)):
				t.Errorf("got %+v, %v", cfg, err)
			}
		})
	}
}

// TestBasicTokenizer: the known answers of BERT's own tokenization tests.
func TestBasicTokenizer(t *testing.T) {
	lower := &WordPiece{Lower: true, StripAccents: true, SplitCJK: true}
	cased := &WordPiece{SplitCJK: true}
	keepAccents := &WordPiece{Lower: true, SplitCJK: true}
	for _, c := range []struct {
		w    *WordPiece
		in   string
		want []string
	}{
		{lower, " \tHeLLo!how  \n Are yoU?  ", []string{"hello", "!", "how", "are", "you", "?"}},
		{lower, "H\u00E9llo", []string{"hello"}},
		{lower, "ah\u535A\u63A8zz", []string{"ah", "\u535A", "\u63A8", "zz"}},
		{cased, " \tHeLLo!how  \n Are yoU?  ", []string{"HeLLo", "!", "how", "Are", "yoU", "?"}},
		{keepAccents, " \tHäLLo!how  \n Are yoU?  ", []string{"hällo", "!", "how", "are", "you", "?"}},
		{lower, "a\x00b\ufffdc\u0005d\u200be", []string{"abcde"}}, // NUL, U+FFFD, controls and Cf dropped
		{lower, "x\u00a0y\u3000z", []string{"x", "y", "z"}},       // Unicode spaces split
		{lower, "don't $5 `q` ^_^", []string{"don", "'", "t", "$", "5", "`", "q", "`", "^", "_", "^"}},
		{lower, "\u00bfQu\u00e9?", []string{"¿", "que", "?"}},
		// Hangul and Kana are not split apart; accent stripping decomposes
		// Hangul syllables into their jamo, as BERT's tokenizer does.
		{lower, "한국어 カタカナ", []string{norm.NFD.String("한국어"), "カタカナ"}},
	} {
		if got := c.w.basic(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("basic(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWordPiece(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "vocab.txt", []byte(strings.Join([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing", ",", "low", "lowest"}, "\n")+"\n"))
	w, err := ReadWordPiece(dir, Config{DoLowerCase: true, TokenizeCJKChars: true})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string][]string{
		"":                                  nil,
		"unwanted running":                  {"un", "##want", "##ed", "runn", "##ing"},
		"unwantedX running":                 {"[UNK]", "runn", "##ing"},
		"UNwant\u00E9d,running":             {"un", "##want", "##ed", ",", "runn", "##ing"},
		"lowest":                            {"lowest"},
		strings.Repeat("a", 101):            {"[UNK]"},
		"low " + strings.Repeat("want", 25): {"low", "want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want", "##want"},
	} {
		if got := w.Tokenize(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Tokenize(%.30q) = %q, want %q", in, got, want)
		}
	}
	second := "running"
	ids, types, dropped := w.Encode("unwanted running", &second, 6)
	if !reflect.DeepEqual(ids, []int{2, 8, 5, 3, 9, 3}) || !reflect.DeepEqual(types, []int{0, 0, 0, 0, 1, 1}) || dropped != 4 {
		t.Errorf("Encode pair truncated to 6: %v %v dropped %d", ids, types, dropped)
	}
	if _, err := ReadWordPiece(writeDir(t, "vocab.txt", "a\nb\n"), Config{}); err == nil || !strings.Contains(err.Error(), "not a BERT vocabulary") {
		t.Errorf("a vocabulary without [UNK]: %v", err)
	}
}

func writeDir(t *testing.T, name, body string) string {
	dir := t.TempDir()
	writeFile(t, dir, name, []byte(body))
	return dir
}
