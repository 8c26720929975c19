package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/mech"
)

// Config is one experiment: everything that determines its results. The
// YAML keys are documented in docs/config.md.
type Config struct {
	Name       string          `yaml:"name"`
	Data       string          `yaml:"data"` // data root ("": $XP_DATA)
	Dataset    DatasetConfig   `yaml:"dataset"`
	Tokenizer  string          `yaml:"tokenizer"`
	Embedding  EmbeddingConfig `yaml:"embedding"`
	Mechanisms []MechConfig    `yaml:"mechanisms"`
	Apply      []string        `yaml:"apply"` // none, train, test, both
	Model      ModelConfig     `yaml:"model"`
	Train      TrainConfig     `yaml:"train"`
	Seeds      []uint64        `yaml:"seeds"`
	Device     string          `yaml:"device"`
	Threads    int             `yaml:"threads"`
	Workers    int             `yaml:"workers"`
	Output     string          `yaml:"output"`
	Cache      string          `yaml:"cache"`

	file string     // where the config was read from
	root *yaml.Node // its document, for line numbers
}

// DatasetConfig names the corpus and how its splits are used.
type DatasetConfig struct {
	Name          string  `yaml:"name"`
	Path          string  `yaml:"path"`           // overrides the conventional place under the data root
	Train         string  `yaml:"train"`          // training split (default train)
	Test          string  `yaml:"test"`           // evaluated split (default: dev for GLUE, test otherwise)
	ValidFraction float64 `yaml:"valid_fraction"` // carved from train for early stopping (default 0.1)
	SplitSeed     uint64  `yaml:"split_seed"`     // seed of every data split and subsample (default 1)
	TrainLimit    int     `yaml:"train_limit"`    // seeded subsample of the training split (0: all)
	TestLimit     int     `yaml:"test_limit"`     // seeded subsample of the test split (0: all)
}

// EmbeddingConfig is the word vectors: the model's input embeddings and
// the mechanisms' candidate vocabulary.
type EmbeddingConfig struct {
	Path   string `yaml:"path"`   // relative to the data root, or absolute
	Format string `yaml:"format"` // auto (default), glove, vec, word2vec-binary
	Top    int    `yaml:"top"`    // keep the first N words as candidates (0: all)
}

// MechConfig is one mechanism and its grid: every ε × every combination of
// the grid's values, with Params fixed.
type MechConfig struct {
	Name    string         `yaml:"name"`
	Epsilon []float64      `yaml:"epsilon"`
	Params  map[string]any `yaml:"params"`
	Grid    map[string]any `yaml:"grid"` // each value a list
}

// ModelConfig is the classifier.
type ModelConfig struct {
	Kind       string  `yaml:"kind"` // bilstm (default) or baseline
	Hidden     int64   `yaml:"hidden"`
	Layers     int64   `yaml:"layers"`
	Pooling    string  `yaml:"pooling"`
	HeadHidden int64   `yaml:"head_hidden"`
	Dropout    float64 `yaml:"dropout"`
	LR         float64 `yaml:"lr"`
	Clip       float64 `yaml:"clip"`
	FineTune   bool    `yaml:"fine_tune"` // train the embeddings (default: frozen)
}

// TrainConfig is the training loop.
type TrainConfig struct {
	Epochs   int `yaml:"epochs"`
	Batch    int `yaml:"batch"`
	MaxLen   int `yaml:"max_len"`
	Patience int `yaml:"patience"`
}

// Modes where privatization applies.
var Modes = []string{"none", "train", "test", "both"}

// File is the path the config was read from.
func (c *Config) File() string { return c.file }

// Load reads, overrides (sets: "path.to.key=value", YAML values) and
// validates the config at path. Every error names the file and the line
// of the offending key (or the --set that introduced it).
func Load(path string, sets []string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data, sets)
}

// Parse is Load on the config's bytes; path names it in errors.
func Parse(path string, data []byte, sets []string) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlErr(path, err)
	}
	if doc.Kind == 0 {
		return nil, srcerr.At(path, 1, "empty config")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, srcerr.At(path, root.Line, "a config is a mapping of keys (name, dataset, embedding, …)")
	}
	c := &Config{file: path, root: root}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, yamlErr(path, err)
	}
	if len(sets) > 0 {
		for _, s := range sets {
			if err := set(root, s); err != nil {
				return nil, fmt.Errorf("%s: --set %s: %w", path, s, err)
			}
		}
		// Decode the edited tree again; its errors come from the
		// overrides (the file itself decoded above).
		var out bytes.Buffer
		if err := yaml.NewEncoder(&out).Encode(root); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		*c = Config{file: path, root: root}
		dec := yaml.NewDecoder(&out)
		dec.KnownFields(true)
		if err := dec.Decode(c); err != nil {
			var te *yaml.TypeError
			msg := err.Error()
			if errors.As(err, &te) && len(te.Errors) > 0 {
				msg = te.Errors[0]
			}
			if _, m, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "line ") {
				msg = m
			}
			return nil, fmt.Errorf("%s: after --set %s: %s", path, strings.Join(sets, " "), msg)
		}
	}
	c.defaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// yamlErr turns yaml.v3's "line N: msg" errors into file:line errors.
func yamlErr(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return lineMsg(path, te.Errors[0])
	}
	return lineMsg(path, strings.TrimPrefix(err.Error(), "yaml: "))
}

func lineMsg(path, msg string) error {
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, m, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(n); err == nil {
				return srcerr.At(path, line, "%s", m)
			}
		}
	}
	return fmt.Errorf("%s: %s", path, msg)
}

// set applies one "a.b.c=value" override to the document, creating
// mappings as needed; list elements are addressed by index (mechanisms.0.epsilon).
func set(root *yaml.Node, s string) error {
	key, value, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return errors.New("want path.to.key=value")
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return fmt.Errorf("value: %w", err)
	}
	var val *yaml.Node
	if v.Kind == 0 {
		val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	} else {
		val = v.Content[0]
	}
	zeroLines(val)
	n := root
	parts := strings.Split(key, ".")
	for i, p := range parts {
		last := i == len(parts)-1
		switch n.Kind {
		case yaml.MappingNode:
			j := slices.IndexFunc(n.Content, func(k *yaml.Node) bool { return k.Value == p })
			if j < 0 || j%2 == 1 {
				child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				if last {
					child = val
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, child)
				n = child
				continue
			}
			if last {
				n.Content[j+1] = val
			}
			n = n.Content[j+1]
		case yaml.SequenceNode:
			j, err := strconv.Atoi(p)
			if err != nil || j < 0 || j >= len(n.Content) {
				return fmt.Errorf("%q: want an index below %d", p, len(n.Content))
			}
			if last {
				n.Content[j] = val
			}
			n = n.Content[j]
		default:
			return fmt.Errorf("%s is not a mapping or a list", strings.Join(parts[:i], "."))
		}
	}
	return nil
}

func zeroLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		zeroLines(c)
	}
}

// defaults fills unset keys.
func (c *Config) defaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&c.Tokenizer, "default")
	def(&c.Embedding.Format, "auto")
	def(&c.Dataset.Train, "train")
	if c.Dataset.Test == "" {
		c.Dataset.Test = "test"
		if c.Dataset.Name == "sst2" || c.Dataset.Name == "qnli" {
			c.Dataset.Test = "dev"
		}
	}
	if c.Dataset.ValidFraction == 0 {
		c.Dataset.ValidFraction = 0.1
	}
	if c.Dataset.SplitSeed == 0 {
		c.Dataset.SplitSeed = 1
	}
	if len(c.Apply) == 0 {
		c.Apply = []string{"none", "train", "test"}
	}
	def(&c.Model.Kind, "bilstm")
	def(&c.Model.Pooling, "last")
	if c.Model.Hidden == 0 {
		c.Model.Hidden = 128
	}
	if c.Model.Layers == 0 {
		c.Model.Layers = 1
	}
	if c.Model.LR == 0 {
		c.Model.LR = 1e-3
	}
	if c.Model.Clip == 0 {
		c.Model.Clip = 5
	}
	if c.Train.Epochs == 0 {
		c.Train.Epochs = 3
	}
	if c.Train.Batch == 0 {
		c.Train.Batch = 64
	}
	if c.Train.MaxLen == 0 {
		c.Train.MaxLen = 64
	}
	if len(c.Seeds) == 0 {
		c.Seeds = []uint64{1}
	}
	def(&c.Device, "cpu")
	if c.Workers == 0 {
		c.Workers = 1
	}
	def(&c.Output, "runs/"+cmpOr(c.Name, "experiment"))
	def(&c.Cache, "runs/cache")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// line returns the line of the key at path (mapping keys and list
// indices), or of its nearest existing parent; 0 for --set values.
func (c *Config) line(path ...any) int {
	n, line := c.root, 0
	for _, p := range path {
		if n == nil {
			break
		}
		var next *yaml.Node
		switch k := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == k {
						line, next = max(line, n.Content[i].Line), n.Content[i+1]
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k < len(n.Content) {
				next = n.Content[k]
				line = max(line, next.Line)
			}
		}
		n = next
	}
	return line
}

// errAt is a validation error at the key path.
func (c *Config) errAt(msg string, path ...any) error {
	if l := c.line(path...); l > 0 {
		return srcerr.At(c.file, l, "%s", msg)
	}
	return fmt.Errorf("%s: %s", c.file, msg)
}

// validate checks ranges and references. Files are checked by the runner's
// Resolve (it needs the data root); everything else is here.
func (c *Config) validate() error {
	if _, err := datasets.SpecOf(c.Dataset.Name); err != nil {
		return c.errAt(err.Error(), "dataset", "name")
	}
	if c.Dataset.Name == "opinion" {
		return c.errAt("dataset opinion is word-level: it has no train/test classification task for xp run", "dataset", "name")
	}
	if f := c.Dataset.ValidFraction; !(f > 0 && f < 1) {
		return c.errAt(fmt.Sprintf("valid_fraction %v outside (0, 1)", f), "dataset", "valid_fraction")
	}
	if c.Dataset.TrainLimit < 0 || c.Dataset.TestLimit < 0 {
		return c.errAt("limits must be ≥ 0", "dataset")
	}
	if c.Tokenizer != "default" && c.Tokenizer != "whitespace" {
		return c.errAt(fmt.Sprintf("tokenizer %q: want default (GloVe-style) or whitespace", c.Tokenizer), "tokenizer")
	}
	if c.Embedding.Path == "" {
		return c.errAt("embedding.path is required", "embedding")
	}
	if !slices.Contains([]string{"auto", "glove", "vec", "word2vec-binary"}, c.Embedding.Format) {
		return c.errAt(fmt.Sprintf("embedding format %q: want auto, glove, vec or word2vec-binary", c.Embedding.Format), "embedding", "format")
	}
	if c.Embedding.Top < 0 {
		return c.errAt("embedding.top must be ≥ 0", "embedding", "top")
	}
	for _, a := range c.Apply {
		if !slices.Contains(Modes, a) {
			return c.errAt(fmt.Sprintf("apply %q: want none, train, test or both", a), "apply")
		}
	}
	if slices.ContainsFunc(c.Apply, func(a string) bool { return a != "none" }) && len(c.Mechanisms) == 0 {
		return c.errAt("apply lists privatized modes but no mechanisms are given", "apply")
	}
	for i, m := range c.Mechanisms {
		if len(m.Epsilon) == 0 {
			return c.errAt(fmt.Sprintf("mechanism %s: epsilon list is empty", m.Name), "mechanisms", i)
		}
		for j, e := range m.Epsilon {
			if err := mech.Check(m.Name, e, m.Params); err != nil {
				return c.errAt(err.Error(), "mechanisms", i, "epsilon", j)
			}
		}
		for k, v := range m.Grid {
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return c.errAt(fmt.Sprintf("grid %s: want a non-empty list", k), "mechanisms", i, "grid", k)
			}
			if _, dup := m.Params[k]; dup {
				return c.errAt(fmt.Sprintf("%s is both a fixed parameter and a grid key", k), "mechanisms", i, "grid", k)
			}
			for _, x := range list {
				if err := mech.Check(m.Name, m.Epsilon[0], mech.Params{k: x}); err != nil {
					return c.errAt(err.Error(), "mechanisms", i, "grid", k)
				}
			}
		}
	}
	mc := c.Model
	switch {
	case mc.Kind != "bilstm" && mc.Kind != "baseline":
		return c.errAt(fmt.Sprintf("model kind %q: want bilstm or baseline", mc.Kind), "model", "kind")
	case mc.Hidden < 1 || mc.Layers < 1 || mc.HeadHidden < 0:
		return c.errAt("model hidden and layers must be ≥ 1, head_hidden ≥ 0", "model")
	case mc.Pooling != "last" && mc.Pooling != "max":
		return c.errAt(fmt.Sprintf("pooling %q: want last or max", mc.Pooling), "model", "pooling")
	case !(mc.Dropout >= 0 && mc.Dropout < 1):
		return c.errAt(fmt.Sprintf("dropout %v outside [0, 1)", mc.Dropout), "model", "dropout")
	case !(mc.LR > 0) || math.IsInf(mc.LR, 0):
		return c.errAt(fmt.Sprintf("lr %v must be > 0", mc.LR), "model", "lr")
	case mc.Clip < 0:
		return c.errAt("clip must be ≥ 0", "model", "clip")
	}
	t := c.Train
	if t.Epochs < 1 || t.Batch < 1 || t.MaxLen < 1 || t.Patience < 0 {
		return c.errAt("train: epochs, batch and max_len must be ≥ 1, patience ≥ 0", "train")
	}
	if c.Workers < 1 || c.Threads < 0 {
		return c.errAt("workers must be ≥ 1 and threads ≥ 0", "workers")
	}
	seen := map[uint64]bool{}
	for _, s := range c.Seeds {
		if seen[s] {
			return c.errAt(fmt.Sprintf("seed %d repeats", s), "seeds")
		}
		seen[s] = true
	}
	return nil
}

// ErrAt is an error about the value at the key path (for example
// "embedding", "path"), with the config's file and that key's line: for
// checks that need the data (missing files), made by the runner.
func (c *Config) ErrAt(msg string, path ...any) error { return c.errAt(msg, path...) }
