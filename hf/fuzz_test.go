package hf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oneLine fails the test unless err's text is one line naming path: what
// a user shown a bad checkpoint reads.
func oneLine(t *testing.T, err error, path string) {
	t.Helper()
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, path) {
		t.Fatalf("error %q: want one line naming %s", msg, path)
	}
}

// FuzzSafetensors: any file handed to OpenSafetensors is refused with
// one line naming it, or opened with every tensor inside the data
// section; reading each floating-point tensor gives its shape's number
// of values and allocates no more than the file holds.
func FuzzSafetensors(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, map[string]Tensor32{
		"a.weight": {Shape: []int64{2, 3}, Data: []float32{1, -2, 3.5, 0, 1e-8, -7}},
		"b":        {Shape: []int64{}, Data: []float32{42}},
		"empty":    {Shape: []int64{0, 4}},
	}, map[string]string{"format": "pt"}); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(good[:12])
	f.Add(header(`{"x":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"y":{"dtype":"F16","shape":[1],"data_offsets":[4,6]}}`, make([]byte, 6)))
	f.Add(header(`{"x":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},"y":{"dtype":"F64","shape":[1],"data_offsets":[8,16]}}`, make([]byte, 16)))
	f.Add(header(`{"x":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}}`, nil))
	f.Add(header(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}`, make([]byte, 6)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}'})
	f.Fuzz(func(t *testing.T, body []byte) {
		path := filepath.Join(t.TempDir(), "model.safetensors")
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := OpenSafetensors(path)
		if err != nil {
			oneLine(t, err, path)
			return
		}
		defer st.Close()
		dataLen := int64(len(body)) - st.data
		read := int64(0)
		for _, name := range st.Names() {
			ti := st.Tensors[name]
			if ti.Begin < 0 || ti.End < ti.Begin || ti.End > dataLen {
				t.Fatalf("tensor %q at [%d, %d) of a data section of %d bytes", name, ti.Begin, ti.End, dataLen)
			}
			v, shape, err := st.Float32(name)
			switch ti.DType {
			case "F32", "F64", "F16", "BF16":
				if err != nil || int64(len(v)) != ti.Elements() || len(shape) != len(ti.Shape) {
					t.Fatalf("tensor %q (%s %v): %d values, %v", name, ti.DType, ti.Shape, len(v), err)
				}
				read += int64(len(v)) * 4
			default:
				if err == nil {
					t.Fatalf("tensor %q of %s read as floats", name, ti.DType)
				}
				oneLine(t, err, path)
			}
		}
		// Each value read stands for at least two bytes of the file:
		// float32 widened from F16 or BF16 takes at most twice the bytes.
		if read > 2*dataLen {
			t.Fatalf("%d bytes of values from a data section of %d", read, dataLen)
		}
	})
}

// FuzzReadConfig: any config.json (and tokenizer_config.json beside it)
// is refused with one line naming a file, or read into sizes the model
// can be built with.
func FuzzReadConfig(f *testing.F) {
	f.Add([]byte(`{"model_type":"bert","vocab_size":30,"hidden_size":16,"num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":32,"max_position_embeddings":32}`), []byte(`{"do_lower_case":false}`))
	f.Add([]byte(`{"model_type":"distilbert","vocab_size":30,"dim":16,"n_layers":1,"n_heads":4,"hidden_dim":32}`), []byte(nil))
	f.Add([]byte(`{"model_type":"roberta","vocab_size":50,"pad_token_id":1,"max_position_embeddings":34,"num_labels":3,"id2label":{"0":"neg","2":"pos"}}`), []byte(`{"strip_accents":true}`))
	f.Add([]byte(`{"model_type":"gpt2"}`), []byte(nil))
	f.Add([]byte(`{"model_type":"bert","vocab_size":30,"hidden_size":16,"num_attention_heads":3}`), []byte(`[`))
	f.Add([]byte(`{"model_type":"roberta","vocab_size":50,"pad_token_id":510}`), []byte(nil))
	f.Fuzz(func(t *testing.T, config, tokenizer []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), config, 0o644); err != nil {
			t.Fatal(err)
		}
		if len(tokenizer) > 0 {
			if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), tokenizer, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c, err := ReadConfig(dir)
		if err != nil {
			oneLine(t, err, dir)
			return
		}
		if c.VocabSize <= 0 || c.Hidden <= 0 || c.Heads <= 0 || c.Hidden%c.Heads != 0 || c.Layers <= 0 || c.Intermediate <= 0 ||
			c.MaxLength() < 4 || c.PositionOffset < 0 || c.TypeVocab < 0 || !(c.LayerNormEps > 0 && c.LayerNormEps < 1) {
			t.Fatalf("accepted %+v", c)
		}
	})
}

// FuzzWordPiece: any vocab.txt is refused with one line naming it, or
// encodes any text (and pair) within the length asked, every id a line
// of the file.
func FuzzWordPiece(f *testing.F) {
	f.Add("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n##s\nfilm\n", "The films!")
	f.Add("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[UNK]\r\n", "ça va 東京")
	f.Add("[UNK]\n", "x")
	f.Add("[PAD]\n[UNK]\n[CLS]\n[SEP]\n"+strings.Repeat("a", 200)+"\n", strings.Repeat("a", 120))
	f.Fuzz(func(t *testing.T, vocab, text string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte(vocab), 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := ReadWordPiece(dir, Config{DoLowerCase: true, TokenizeCJKChars: true})
		if err != nil {
			oneLine(t, err, dir)
			return
		}
		ids, types, _ := w.Encode(text, &text, 16)
		if len(ids) > 16 || len(types) != len(ids) {
			t.Fatalf("%d ids and %d types for at most 16", len(ids), len(types))
		}
		for _, id := range ids {
			if id < 0 || id >= len(w.Words) {
				t.Fatalf("id %d of %d pieces", id, len(w.Words))
			}
		}
	})
}
