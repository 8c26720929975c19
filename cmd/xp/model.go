package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/models"
)

const modelUsage = `usage: xp model check [--json] [-data DIR] CHECKPOINT [TEXT...]

  check   load a Hugging Face checkpoint folder (config.json, vocab.txt,
          model.safetensors) as xp's transformer model does and print its
          architecture, parameter count and which tensors were loaded or
          initialised, then for each TEXT its word pieces, their ids and the
          checkpoint's logits (--json: one object per text per line, with
          fields text, tokens, ids, logits). A relative CHECKPOINT that is not
          in the current folder is looked for under the data root.
`

func modelCmd(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprint(out, modelUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return errHelp
		}
		return errors.New("model: want the subcommand check")
	}
	fs := flag.NewFlagSet("model check", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "one JSON object per text")
	root := fs.String("data", datasets.RootFromEnv(), "data root")
	if err := parseFlags(fs, args[1:], modelUsage, out); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("model check: name a checkpoint folder")
	}
	dir := fs.Arg(0)
	if _, err := os.Stat(dir); err != nil && !filepath.IsAbs(dir) && *root != "" {
		dir = filepath.Join(*root, dir)
	}
	c, err := models.CheckBert(dir, fs.Args()[1:])
	if err != nil {
		return fmt.Errorf("model check: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		for _, t := range c.Texts {
			if err := enc.Encode(t); err != nil {
				return err
			}
		}
		return nil
	}
	cfg := c.Config
	fmt.Fprintf(out, "checkpoint %s: %s, %d layers × %d (%d heads, feed-forward %d), %d pieces, %d positions, %.1f M parameters\n",
		c.Dir, cfg.ModelType, cfg.Layers, cfg.Hidden, cfg.Heads, cfg.Intermediate, cfg.VocabSize, cfg.MaxPositions, float64(c.Parameters)/1e6)
	fmt.Fprintf(out, "loaded %d tensors\n", len(c.Load.Loaded))
	if len(c.Load.Initialised) > 0 {
		fmt.Fprintf(out, "initialised (not in the checkpoint at this size; its logits come from a fresh head): %s\n", strings.Join(c.Load.Initialised, ", "))
	}
	if len(c.Load.Unused) > 0 {
		fmt.Fprintf(out, "unused: %s\n", strings.Join(c.Load.Unused, ", "))
	}
	for i, t := range c.Texts {
		ids := make([]string, len(t.IDs))
		for j, id := range t.IDs {
			ids[j] = fmt.Sprint(id)
		}
		logits := make([]string, len(t.Logits))
		for j, l := range t.Logits {
			logits[j] = fmt.Sprintf("%.6g", l)
		}
		fmt.Fprintf(out, "text %d: %q\n  pieces  %s\n  ids     %s\n  logits  %s\n", i+1, t.Text, strings.Join(t.Tokens, " "), strings.Join(ids, " "), strings.Join(logits, " "))
	}
	return nil
}
