package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/xp-nlp/xp/datasets/catalog"
	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/hf"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/models"
	"github.com/xp-nlp/xp/spec"
)

// The classifier seam: a model kind whose descriptor says Pieces reads
// its own tokenizer's pieces of each text, from a pretrained checkpoint;
// every other kind reads word ids over the task's vocabulary and the
// embedding's vectors (modelVocab, modelData). Privatization is the same
// for both: it rewrites xp's words. A pieces model then reads the
// privatized words joined by spaces, tokenized as its checkpoint's
// tokenizer does; a word the tokenizer cannot decompose becomes [UNK].

// pieceInput is a pieces model's checkpoint and tokenizer.
type pieceInput struct {
	dir string
	cfg hf.Config
	tok hf.Tokenizer
}

// ErrNoCheckpoint is what a run whose pretrained checkpoint is not in the
// data root fails with (errors.Is): the paper runs report it as "needs
// the checkpoint" and go on.
var ErrNoCheckpoint = errors.New("needs the checkpoint")

// missingCheckpoint is a config's error at its checkpoint, which is
// ErrNoCheckpoint.
type missingCheckpoint struct{ error }

func (missingCheckpoint) Is(target error) bool { return target == ErrNoCheckpoint }

func (e missingCheckpoint) Unwrap() error { return e.error }

// usesPieces says whether the config's model reads pieces.
func usesPieces(c *experiments.Config) bool {
	d, err := spec.Lookup(spec.Model, c.Model.Kind)
	return err == nil && d.Pieces
}

// loadCheckpoint reads the config's checkpoint's config.json and
// tokenizer and checksums the files the model reads.
func loadCheckpoint(c *experiments.Config) (*pieceInput, string, error) {
	name, _ := c.Model.Params["checkpoint"].(string)
	dir := c.Path(name)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		fetch := ""
		if a, ok := catalog.CheckpointAt(name); ok {
			fetch = fmt.Sprintf(", or fetch it with xp data get %s", a.Name)
		}
		return nil, "", missingCheckpoint{c.ErrAt(fmt.Sprintf("model.checkpoint %s: no folder at %s; xp never downloads weights while it runs: put the checkpoint's Hugging Face folder there (config.json, vocab.txt, model.safetensors, as save_pretrained writes it; docs/models.md)%s", name, dir, fetch), "model", "checkpoint")}
	}
	cfg, err := hf.ReadConfig(dir)
	if err != nil {
		return nil, "", c.ErrAt(err.Error(), "model", "checkpoint")
	}
	if err := models.Runs(cfg); err != nil {
		return nil, "", c.ErrAt(fmt.Sprintf("%s: %v", dir, err), "model", "checkpoint")
	}
	for _, point := range c.ModelPoints() { // every max_len a sweep gives
		if n := c.TrainAt(experiments.Cell{Model: point}).MaxLen; n > cfg.MaxLength() {
			return nil, "", c.ErrAt(fmt.Sprintf("train.max_len = %d: the checkpoint %s holds at most %d pieces a text (max_position_embeddings %d); give at most %d", n, name, cfg.MaxLength(), cfg.MaxPositions, cfg.MaxLength()), "train", "max_len")
		}
	}
	tok, err := hf.ReadTokenizer(dir, cfg)
	if err != nil {
		return nil, "", c.ErrAt(err.Error(), "model", "checkpoint")
	}
	if _, err := hf.Weights(dir); err != nil {
		return nil, "", c.ErrAt(err.Error(), "model", "checkpoint")
	}
	h := sha256.New()
	for _, f := range slices.Concat([]string{"config.json"}, tok.Files(), []string{"model.safetensors"}) {
		sum, err := xio.SHA256File(filepath.Join(dir, f))
		if err != nil {
			return nil, "", c.ErrAt(err.Error(), "model", "checkpoint")
		}
		io.WriteString(h, f+" "+sum+"\n")
	}
	return &pieceInput{dir: dir, cfg: cfg, tok: tok}, hex.EncodeToString(h.Sum(nil)), nil
}

// pad is the checkpoint's padding piece.
func (p *pieceInput) pad() int64 {
	_, pad := p.tok.Special()
	id, _ := p.tok.ID(pad)
	return int64(id)
}
