package experiments

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/internal/yamldoc"
	"github.com/xp-nlp/xp/metrics"
)

// Config is one experiment: everything that determines its results, and
// where they go. The YAML keys are documented in docs/config.md; Load
// fills the keys a config leaves out with their documented defaults and
// never replaces a value the config gives.
type Config struct {
	Name      string          `yaml:"name" json:"name"`
	Data      string          `yaml:"data" json:"data"` // data root ("": the one the command was given)
	Dataset   DatasetConfig   `yaml:"dataset" json:"dataset"`
	Tokenizer string          `yaml:"tokenizer" json:"tokenizer"`
	Embedding EmbeddingConfig `yaml:"embedding" json:"embedding"`
	// MechEmbedding, when given, is the mechanisms' vectors — their
	// candidate vocabulary and metric (CusText's counter-fitted vectors) —
	// while embedding stays the classifier's input.
	MechEmbedding *EmbeddingConfig `yaml:"mechanism_embedding,omitempty" json:"mechanism_embedding,omitempty"`
	Mechanisms    []MechConfig     `yaml:"mechanisms" json:"mechanisms"`
	Apply         []string         `yaml:"apply,omitempty" json:"apply"` // none, train, test, both (utility configs; empty for analyses)
	Model         ModelConfig      `yaml:"model" json:"model"`
	Analysis      AnalysisConfig   `yaml:"analysis,omitempty" json:"analysis,omitempty"`
	Stages        []StageConfig    `yaml:"stages,omitempty" json:"stages,omitempty"`
	// Privacy asks utility cells for the opt-in privacy measures of their
	// privatized splits (spec's measure descriptor "privacy" lists its
	// parameters); nil: none, the default.
	Privacy map[string]any `yaml:"privacy,omitempty" json:"privacy,omitempty"`
	Train   TrainConfig    `yaml:"train" json:"train"`
	// CommonNoise gives the cells of mechanisms that draw another's noise
	// and only pick differently among the noisy vector's neighbours
	// (Vickrey's) that mechanism's random streams at the same ε and seed:
	// common random numbers (see Config.SourceStream). Off by default.
	CommonNoise bool         `yaml:"common_noise,omitempty" json:"common_noise,omitempty"`
	Seeds       []uint64     `yaml:"seeds" json:"seeds"`
	Device      string       `yaml:"device" json:"device"`
	Threads     int          `yaml:"threads" json:"threads"` // libtorch threads (0: the cores, shared among workers)
	Workers     int          `yaml:"workers" json:"workers"`
	Output      string       `yaml:"output" json:"output"`
	Cache       string       `yaml:"cache" json:"cache"`
	Checks      ChecksConfig `yaml:"checks" json:"checks"`
	// SelectModel, given with a model sweep (a model parameter that is a list),
	// makes the tables keep one model point per line: see SelectConfig.
	SelectModel *SelectConfig `yaml:"select,omitempty" json:"select,omitempty"`
	// Origin is written by xp into a run's resolved config: the file and
	// overrides it was resolved from.
	Origin *Origin `yaml:"origin,omitempty" json:"origin,omitempty"`

	file  string     // where the config was read from
	sum   string     // sha256 of the bytes read
	sets  []string   // the overrides applied
	root  *yaml.Node // its document, for line numbers
	setBy map[*yaml.Node]string
	// portable: what the run writes names no path of this machine
	// (Options.Portable); dataGiven: the data root came from the
	// command (Options.DataRoot), not from the config's data key.
	portable, dataGiven bool
}

// DatasetConfig names the corpus and how its splits are used.
type DatasetConfig struct {
	Name          string  `yaml:"name" json:"name"`
	Path          string  `yaml:"path" json:"path"`                     // overrides the conventional place under the data root
	Train         string  `yaml:"train" json:"train"`                   // training split
	Test          string  `yaml:"test" json:"test"`                     // evaluated split (default: dev for GLUE, test otherwise)
	ValidFraction float64 `yaml:"valid_fraction" json:"valid_fraction"` // carved from train for early stopping
	SplitSeed     uint64  `yaml:"split_seed" json:"split_seed"`         // seed of every data split and subsample
	TrainLimit    int     `yaml:"train_limit" json:"train_limit"`       // seeded subsample of the training split (0: all)
	TestLimit     int     `yaml:"test_limit" json:"test_limit"`         // seeded subsample of the test split (0: all)
	// TestFraction carves this seeded share of the training split (per
	// label) as the test split: datasets table and folder.
	TestFraction float64 `yaml:"test_fraction" json:"test_fraction,omitempty"`
	// TestPath, Text, Text2 and Label are a user's table's (dataset
	// table): its test file, and the columns (keys) of the text, the
	// second text of sentence pairs, and the label.
	TestPath string `yaml:"test_path" json:"test_path,omitempty"`
	Text     string `yaml:"text" json:"text,omitempty"`
	Text2    string `yaml:"text2" json:"text2,omitempty"`
	Label    string `yaml:"label" json:"label,omitempty"`
	// Labels pins a user's dataset's (table, folder) label set, in index
	// order: a label outside it is refused; labels differing only by case,
	// or absent from a split, are then accepted on purpose.
	Labels []string `yaml:"labels" json:"labels,omitempty"`
}

// EmbeddingConfig is the word vectors: the model's input embeddings and
// the mechanisms' candidate vocabulary.
type EmbeddingConfig struct {
	Path   string `yaml:"path" json:"path"`     // relative to the data root, or absolute
	Format string `yaml:"format" json:"format"` // auto, glove, vec, word2vec-binary
	Top    int    `yaml:"top" json:"top"`       // keep the first N words as candidates (0: all)
	// Vocabulary "dataset" keeps only the words of the dataset's texts
	// (after top): the mechanisms' candidates, and the classifier's
	// vocabulary. "" or "all": every word.
	Vocabulary string `yaml:"vocabulary" json:"vocabulary,omitempty"`
}

// MechConfig is one mechanism and its grid: every ε × every combination of
// the grid's values, with Params fixed.
type MechConfig struct {
	Name    string         `yaml:"name" json:"name"`
	Epsilon []float64      `yaml:"epsilon" json:"epsilon"`
	Params  map[string]any `yaml:"params,omitempty" json:"params,omitempty"`
	Grid    map[string]any `yaml:"grid,omitempty" json:"grid,omitempty"` // each value a list
}

// ModelConfig is the classifier: a kind and its parameters (spec's
// descriptor of the kind lists them).
type ModelConfig struct {
	Kind   string         `yaml:"kind" json:"kind"`
	Params map[string]any `yaml:",inline" json:"params,omitempty"`
}

// AnalysisConfig chooses what the cells compute: absent (kind ""), a
// classifier's utility under each mechanism; otherwise the named privacy
// analysis and its parameters (spec's descriptor of the analysis lists
// them). An analysis has no apply, model or train: those sections may
// stay in the file but change none of its numbers.
type AnalysisConfig struct {
	Kind   string         `yaml:"kind" json:"kind,omitempty"`
	Params map[string]any `yaml:",inline" json:"params,omitempty"`
}

// StageConfig is one computation over the cells' results, run after
// them (spec's descriptor of the stage lists its parameters).
type StageConfig struct {
	Kind   string         `yaml:"kind" json:"kind"`
	Params map[string]any `yaml:",inline" json:"params,omitempty"`
}

// IsAnalysis reports whether the config's cells are analyses.
func (c *Config) IsAnalysis() bool { return c.Analysis.Kind != "" }

// TrainConfig is the training loop. A setting given as a list is swept
// with the model's parameters (see Config.ModelGrid): the field holds the
// list's first value and Sweep the list.
type TrainConfig struct {
	Epochs   int `yaml:"epochs" json:"epochs" sweep:"list"`
	Batch    int `yaml:"batch" json:"batch" sweep:"list"`
	MaxLen   int `yaml:"max_len" json:"max_len" sweep:"list"`
	Patience int `yaml:"patience" json:"patience" sweep:"list"` // 0: never stop early
	// Sweep holds the settings given as lists, by their YAML names; nil
	// where none is, so that the keys of a config without a sweep are
	// what they were before training settings could be swept.
	Sweep map[string][]int `yaml:"-" json:"sweep,omitempty"`
}

// SelectConfig chooses, of a model sweep's points, the one each line of
// the tables reports: BestBy "valid", the highest mean validation
// accuracy over seeds (the validation split carved from the training
// split), so that the test split plays no part in the choice. It changes
// no cell and no record, only which lines the tables keep.
type SelectConfig struct {
	BestBy string `yaml:"best_by" json:"best_by"`
}

// ChecksConfig sets the warnings a run raises; they change no number.
type ChecksConfig struct {
	// MaxOOV flags a privatized split whose share of out-of-vocabulary
	// tokens (passed through unprivatized) is above it.
	MaxOOV float64 `yaml:"max_oov" json:"max_oov"`
}

// Origin is where a resolved config came from.
type Origin struct {
	File   string   `yaml:"file" json:"file"`
	SHA256 string   `yaml:"sha256" json:"sha256"`
	Set    []string `yaml:"set,omitempty" json:"set,omitempty"`
}

// Modes where privatization applies.
var Modes = []string{"none", "train", "test", "both"}

// DefaultSplitSeed is dataset.split_seed when a config does not give it:
// the seed of every carved split and subsample (xp data show uses it too,
// so that it shows the splits a config reads).
const DefaultSplitSeed = 1

// defaults is the config before a file is decoded onto it: decoding sets
// only the keys the file gives, so a given value is never replaced.
// Defaults that depend on other keys (dataset.test, output) are filled
// after decoding, and only when the key is absent.
func defaults() Config {
	return Config{
		Tokenizer: "default",
		Dataset:   DatasetConfig{Train: "train", ValidFraction: 0.1, SplitSeed: DefaultSplitSeed},
		Embedding: EmbeddingConfig{Format: "auto"},
		Apply:     []string{"none", "train", "test"},
		Model:     ModelConfig{Kind: "bilstm"},
		Train:     TrainConfig{Epochs: 3, Batch: 64, MaxLen: 64},
		Seeds:     []uint64{1},
		Device:    "cpu",
		Workers:   1,
		Cache:     "runs/cache",
		Checks:    ChecksConfig{MaxOOV: metrics.DefaultMaxOOV},
	}
}

// Options are what a command gives Load besides the file.
type Options struct {
	// Set are overrides "path.to.key=value" (YAML values), applied in order.
	Set []string
	// DataRoot is the data root used when the config has no data key
	// (a command's --data flag or $XP_DATA, read by the command).
	DataRoot string
	// Portable: the run folder is kept in a repository (the paper runs'
	// records), so what the run writes there names no path of this
	// machine: the data root the command gave is written as "" (the one
	// the reading command is given), and the output, cache and source
	// config as relative to the working folder (see Resolved, Recorded).
	Portable bool
}

// File is the path the config was read from.
func (c *Config) File() string { return c.file }

// SHA256 is the checksum of the config's bytes as read: editing the file
// afterwards changes nothing about this Config.
func (c *Config) SHA256() string { return c.sum }

// Load reads, overrides, completes and validates the config at path. Every
// error names the file and the line of the offending key, or the --set
// that introduced it.
func Load(path string, opt Options) (*Config, error) {
	data, err := xio.ReadFileMax(path, xio.MaxConfig)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data, opt)
}

// Parse is Load on the config's bytes; path names it in errors and
// relative output and cache folders stay relative to the working folder.
func Parse(path string, data []byte, opt Options) (*Config, error) {
	if len(data) > yamldoc.MaxBytes {
		return nil, srcerr.At(path, 0, "%d bytes: a config is at most %d", len(data), yamldoc.MaxBytes)
	}
	pdoc, err := yamldoc.Parse(path, data)
	if err != nil {
		return nil, err
	}
	doc := *pdoc
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, srcerr.At(path, 1, "empty config")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, srcerr.At(path, root.Line, "a config is a mapping of keys (name, dataset, embedding, …)")
	}
	sum := sha256.Sum256(data)
	c := defaults()
	c.file, c.sum, c.root, c.setBy, c.sets = path, hex.EncodeToString(sum[:]), root, map[*yaml.Node]string{}, opt.Set
	c.portable = opt.Portable
	for _, s := range opt.Set {
		if err := c.set(s); err != nil {
			return nil, fmt.Errorf("%s: --set %s: %w", path, s, err)
		}
	}
	if err := c.checkTree(); err != nil {
		return nil, err
	}
	if err := root.Decode(&c); err != nil {
		return nil, yamlErr(path, err) // checkTree catches what Decode would refuse; this is a backstop
	}
	c.complete(opt)
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// complete fills the defaults that depend on other keys and resolves the
// data root.
func (c *Config) complete(opt Options) {
	sp, _ := datasets.SpecOf(c.Dataset.Name) // an unknown name is refused by validation
	if sp.Train != "" && !c.has("dataset", "train") {
		c.Dataset.Train = sp.Train // the opinion lexicon's one split
	}
	if !c.has("dataset", "test") {
		c.Dataset.Test = cmp.Or(sp.Test, "test")
	}
	if !c.has("output") {
		name := c.Name
		if name == "" {
			name = "experiment"
		}
		c.Output = filepath.Join("runs", name)
	}
	if c.Data == "" {
		c.Data, c.dataGiven = opt.DataRoot, true
	}
	// every word is the default, written one way (keys read the config)
	if c.Embedding.Vocabulary == "all" {
		c.Embedding.Vocabulary = ""
	}
	if c.MechEmbedding != nil && c.MechEmbedding.Vocabulary == "all" {
		c.MechEmbedding.Vocabulary = ""
	}
}

// Path resolves a path of the config (embedding.path, dataset.path):
// absolute paths stay as they are, a path written ./… or ../… is relative
// to the config file's folder, any other against the data root.
func (c *Config) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if dir, ok := c.beside(p); ok {
		return filepath.Join(dir, p)
	}
	if c.Data == "" {
		return p
	}
	return filepath.Join(c.Data, p)
}

// beside reports whether p is written relative to the config file's own
// folder ("./my.csv", "../data/my.csv") and that folder: the folder of
// the file the user wrote (a run folder's resolved config names it as its
// origin).
func (c *Config) beside(p string) (string, bool) {
	if !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") {
		return "", false
	}
	file, _ := c.Source()
	if file == "" {
		return "", false
	}
	return filepath.Dir(file), true
}

// Beside is where a relative path p not written with ./ would be if it
// were meant relative to the config file's folder ("" for an absolute p
// or a config without a file): for the hint when p is not under the data
// root.
func (c *Config) Beside(p string) string {
	file, _ := c.Source()
	if p == "" || filepath.IsAbs(p) || file == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(file), p)
}

// Clone returns a deep copy: the runner may resolve settings (the device)
// in its copy without touching the caller's config.
func (c *Config) Clone() *Config {
	d := *c
	d.Mechanisms = make([]MechConfig, len(c.Mechanisms))
	for i, m := range c.Mechanisms {
		m.Epsilon = append([]float64(nil), m.Epsilon...)
		m.Params, m.Grid = cloneMap(m.Params), cloneMap(m.Grid)
		d.Mechanisms[i] = m
	}
	d.Apply = append([]string(nil), c.Apply...)
	d.Seeds = append([]uint64(nil), c.Seeds...)
	d.Model.Params = cloneMap(c.Model.Params)
	if c.Train.Sweep != nil {
		d.Train.Sweep = make(map[string][]int, len(c.Train.Sweep))
		for k, v := range c.Train.Sweep {
			d.Train.Sweep[k] = slices.Clone(v)
		}
	}
	if c.SelectModel != nil {
		sel := *c.SelectModel
		d.SelectModel = &sel
	}
	d.Analysis.Params = cloneMap(c.Analysis.Params)
	if c.MechEmbedding != nil {
		e := *c.MechEmbedding
		d.MechEmbedding = &e
	}
	if c.Origin != nil {
		o := *c.Origin
		o.Set = append([]string(nil), o.Set...)
		d.Origin = &o
	}
	return &d
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if l, ok := v.([]any); ok {
			v = append([]any(nil), l...)
		}
		out[k] = v
	}
	return out
}
