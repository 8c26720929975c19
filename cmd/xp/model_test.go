package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/hftest"
)

// TestModelCheck: xp model check prints a checkpoint's architecture and
// tensors, and for each text its pieces, ids and logits; --json gives one
// object per text with fields text, tokens, ids, logits.
func TestModelCheck(t *testing.T) {
	dir := t.TempDir()
	if _, err := (hftest.Bert{Hidden: 8, Layers: 1, Heads: 2, Intermediate: 16, MaxPositions: 16, Classes: 3, GammaBeta: true, Seed: 4}).Write(dir); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"model", "check", "--json", dir, "The film was good!", "unwanted running"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per text:\n%s", len(lines), out.String())
	}
	var first struct {
		Text   string    `json:"text"`
		Tokens []string  `json:"tokens"`
		IDs    []int     `json:"ids"`
		Logits []float64 `json:"logits"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	want := []string{"[CLS]", "the", "film", "was", "good", "!", "[SEP]"}
	if first.Text != "The film was good!" || strings.Join(first.Tokens, " ") != strings.Join(want, " ") || len(first.IDs) != len(want) || len(first.Logits) != 3 {
		t.Errorf("first text: %+v", first)
	}
	out.Reset()
	if err := run(context.Background(), []string{"model", "check", dir, "unwanted running"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"bert, 1 layers × 8 (2 heads, feed-forward 16)", "loaded 25 tensors", "pieces  [CLS] un ##want ##ed runn ##ing [SEP]", "logits  "} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	if err := run(context.Background(), []string{"model", "check", t.TempDir()}, &out); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("a folder without a checkpoint: %v", err)
	}
}

// TestModelCheckRoberta: a RoBERTa checkpoint's texts are shown in its
// byte-level pieces, framed by <s> and </s>, with its head's logits.
func TestModelCheckRoberta(t *testing.T) {
	dir := t.TempDir()
	if _, err := (hftest.Bert{RoBERTa: true, Hidden: 8, Layers: 1, Heads: 2, Intermediate: 16, MaxPositions: 18, Classes: 2, Seed: 4}).Write(dir); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"model", "check", "--json", dir, "a good film"}, &out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tokens []string  `json:"tokens"`
		Logits []float64 `json:"logits"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := "<s> a Ġgood Ġfilm </s>"; strings.Join(got.Tokens, " ") != want || len(got.Logits) != 2 {
		t.Errorf("tokens %q, %d logits; want %s and 2", got.Tokens, len(got.Logits), want)
	}
}

// TestHelpConfig: xp help config lists every top-level key of a config,
// each of which docs/config.md documents, and points there.
func TestHelpConfig(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"help", "config"}, &out); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range experiments.TopKeys() {
		if !strings.Contains(out.String(), k) {
			t.Errorf("xp help config does not list %s", k)
		}
		if !strings.Contains(string(doc), "`"+k) {
			t.Errorf("docs/config.md does not document the key %s", k)
		}
	}
	if !strings.Contains(out.String(), "docs/config.md") {
		t.Error("xp help config does not point at docs/config.md")
	}
}
