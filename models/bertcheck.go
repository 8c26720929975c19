package models

import (
	"fmt"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/hf"
	"github.com/xp-nlp/xp/torchrt"
)

// BertCheck is what `xp model check` reports of a checkpoint: its
// architecture, size and tensors, and for each text its pieces, their
// ids and the checkpoint's logits, so that xp's forward pass can be held
// against the same checkpoint run elsewhere.
type BertCheck struct {
	Dir        string
	Config     hf.Config
	Parameters int64
	Load       BertLoad
	Texts      []TextCheck
}

// TextCheck is one text's pieces, ids and logits.
type TextCheck struct {
	Text   string    `json:"text"`
	Tokens []string  `json:"tokens"`
	IDs    []int     `json:"ids"`
	Logits []float32 `json:"logits"`
}

// CheckBert loads the checkpoint in dir on the CPU, in evaluation mode,
// and runs each text (cut to the checkpoint's maximum positions). A
// checkpoint without a classification head gets a fresh one drawn from
// seed 0 (reported in Load.Initialised): its logits then mean nothing
// but the encoder's.
func CheckBert(dir string, texts []string) (BertCheck, error) {
	out := BertCheck{Dir: dir}
	cfg, err := hf.ReadConfig(dir)
	if err != nil {
		return out, err
	}
	out.Config = cfg
	if err := Runs(cfg); err != nil {
		return out, fmt.Errorf("%s: %w", dir, err)
	}
	tok, err := hf.ReadTokenizer(dir, cfg)
	if err != nil {
		return out, err
	}
	st, err := hf.OpenWeights(dir)
	if err != nil {
		return out, err
	}
	defer st.Close()
	classes := max(len(cfg.Labels), 2)
	err = torchrt.Do(func() error {
		torchrt.ManualSeed(0)
		m, rep, err := NewBert(cfg, st, BertOptions{Classes: classes}, gotch.CPU)
		if err != nil {
			return err
		}
		defer m.Close()
		out.Load, out.Parameters = rep, m.Parameters()
		for _, text := range texts {
			ids, types, _ := tok.Encode(text, nil, cfg.MaxLength())
			mask := make([]int, len(ids))
			for i := range mask {
				mask[i] = 1
			}
			logits, err := m.Logits(Encoded{IDs: [][]int{ids}, Types: [][]int{types}, Mask: [][]int{mask}}, false)
			if err != nil {
				return err
			}
			tc := TextCheck{Text: text, IDs: ids, Logits: logits}
			for _, id := range ids {
				tc.Tokens = append(tc.Tokens, tok.Piece(id))
			}
			out.Texts = append(out.Texts, tc)
		}
		return nil
	})
	return out, err
}
