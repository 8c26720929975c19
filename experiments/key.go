package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/spec"
)

// Version names how xp computes a cell from its inputs. It is part of
// every key, so records computed by an earlier definition are not reused:
// change it when a change to xp alters the numbers of an unchanged config
// (xp-cell-2: the classifier's vocabulary covers every evaluated token
// with a vector; SanText+'s sensitive set is drawn from the task
// vocabulary; resolved parameters name the noise streams. xp-cell-3: a
// model's vocabulary comes from its training input only and evaluated
// words outside it that have a vector are appended to its embedding, so
// that one trained model serves every cell that shares it).
const Version = "xp-cell-3"

// Inputs are the checksums of what every cell reads: the loaded and
// subsampled splits, and the embedding (with its restriction).
type Inputs struct {
	Data      string `json:"data"`
	Embedding string `json:"embedding"`
	// MechEmbedding is the mechanisms' vectors' checksum when they are
	// not the embedding's (config key mechanism_embedding).
	MechEmbedding string `json:"mechanism_embedding,omitempty"`
	// Checkpoint is a pieces model's checkpoint's checksum (its
	// config.json, vocab.txt and model.safetensors).
	Checkpoint string `json:"checkpoint,omitempty"`
}

// cellKey is everything a cell's numbers depend on, and nothing else: the
// one list of the key's inputs. Config keys that change no number are
// listed in Unkeyed; TestKeyInputs fails when a config key is in neither.
type cellKey struct {
	Version       string           `json:"version"`
	Mechanism     string           `json:"mechanism,omitempty"`
	Params        spec.Values      `json:"params,omitempty"` // resolved: a default given explicitly is the default
	Epsilon       float64          `json:"epsilon,omitempty"`
	Mode          string           `json:"mode"`
	Seed          uint64           `json:"seed"`
	Dataset       DatasetConfig    `json:"dataset"`
	Tokenizer     string           `json:"tokenizer"`
	Embedding     EmbeddingConfig  `json:"embedding"`
	MechEmbedding *EmbeddingConfig `json:"mechanism_embedding,omitempty"`
	Model         modelKey         `json:"model"`
	Train         TrainConfig      `json:"train"`
	Device        string           `json:"device"` // cpu or cuda: the index does not change results
	Inputs        Inputs           `json:"inputs"`
	// Privacy is the resolved opt-in measures of the cell's privatized
	// splits (absent for cells that privatize nothing, and when not asked
	// for: keys of configs without them are as before).
	Privacy spec.Values `json:"privacy,omitempty"`
	// Stream is the streams the cell takes from another mechanism
	// (Config.SourceStream; absent where it keeps its own).
	Stream string `json:"stream,omitempty"`
}

type modelKey struct {
	Kind   string      `json:"kind"`
	Params spec.Values `json:"params"`
}

// corpusKey is everything a privatized split depends on: the cell's
// mechanism setting, ε and seed, the split, and the data and vectors.
// Training settings and the mode (train and both share the privatized
// training split) are not in it.
type corpusKey struct {
	Version       string           `json:"version"`
	Mechanism     string           `json:"mechanism"`
	Params        spec.Values      `json:"params,omitempty"`
	Epsilon       float64          `json:"epsilon"`
	Seed          uint64           `json:"seed"`
	Split         string           `json:"split"`
	Dataset       DatasetConfig    `json:"dataset"`
	Tokenizer     string           `json:"tokenizer"`
	Embedding     EmbeddingConfig  `json:"embedding"`
	MechEmbedding *EmbeddingConfig `json:"mechanism_embedding,omitempty"`
	Device        string           `json:"device"`
	Inputs        Inputs           `json:"inputs"`
	Stream        string           `json:"stream,omitempty"` // as cellKey's
}

// Unkeyed are the config keys that never change a cell's numbers, so
// they stay out of every key: where things are read from and written to,
// how the work is spread, warnings, and which lines of a model sweep the
// tables keep (select). The thread count is here: it can
// change the last bits of libtorch's sums, so records carry the count
// used, but a rerun with other threads reuses the records.
// Mechanisms, apply and seeds choose which cells exist; each cell's key
// holds its own mechanism, parameters, ε, mode and seed.
var Unkeyed = []string{"name", "data", "threads", "workers", "output", "cache", "checks", "origin", "select"}

// analysisKey is everything an analysis cell's numbers depend on: the
// analysis and its parameters, the cell's mechanism setting, ε and seed,
// the vectors, and the data only when the cell reads it. The model,
// training and apply sections are not in it: editing them reuses the
// analysis records.
type analysisKey struct {
	Version       string           `json:"version"`
	Analysis      string           `json:"analysis"`
	Revision      int              `json:"revision,omitempty"` // the analysis's spec.Descriptor.Revision
	AParams       spec.Values      `json:"analysis_params,omitempty"`
	Mechanism     string           `json:"mechanism,omitempty"`
	Params        spec.Values      `json:"params,omitempty"`
	Epsilon       float64          `json:"epsilon,omitempty"`
	Seed          uint64           `json:"seed"`
	Dataset       *DatasetConfig   `json:"dataset,omitempty"`
	Tokenizer     string           `json:"tokenizer,omitempty"`
	Embedding     EmbeddingConfig  `json:"embedding"`
	MechEmbedding *EmbeddingConfig `json:"mechanism_embedding,omitempty"`
	Device        string           `json:"device"`
	Inputs        Inputs           `json:"inputs"`
	Stream        string           `json:"stream,omitempty"` // as cellKey's
}

// Key is the content hash naming the cell's result (see cellKey and
// analysisKey). The config's device must be resolved (not "auto").
func (c *Config) Key(cell Cell, in Inputs) string {
	if cell.Analysis != "" {
		k := analysisKey{Version: Version, Analysis: cell.Analysis, Revision: analysisRevision(cell.Analysis), AParams: c.AnalysisParams(), Mechanism: cell.Mechanism,
			Params: cell.Resolved(), Epsilon: cell.Epsilon, Seed: cell.Seed, Embedding: c.Embedding, MechEmbedding: c.MechEmbedding, Device: deviceKind(c.Device), Inputs: in,
			Stream: c.sharedStream(cell)}
		if c.analysisReadsDataset() {
			d := c.Dataset
			k.Dataset, k.Tokenizer = &d, c.Tokenizer
		} else {
			k.Inputs.Data = ""
		}
		return hash(k)
	}
	k := cellKey{
		Version: Version, Mechanism: cell.Mechanism, Params: cell.Resolved(), Epsilon: cell.Epsilon, Mode: cell.Mode, Seed: cell.Seed,
		Dataset: c.Dataset, Tokenizer: c.Tokenizer, Embedding: c.Embedding, MechEmbedding: c.MechEmbedding, Model: c.modelKey(cell), Train: c.TrainAt(cell),
		Device: deviceKind(c.Device), Inputs: in, Stream: c.sharedStream(cell),
	}
	if cell.Mode != "none" {
		k.Privacy = c.PrivacyMeasures()
	}
	return hash(k)
}

// PrivacyMeasures are the config's opt-in privacy measures completed
// with defaults (nil when the config asks for none). Validated configs
// always resolve.
func (c *Config) PrivacyMeasures() spec.Values {
	if c.Privacy == nil || c.IsAnalysis() {
		return nil
	}
	_, v, err := spec.Resolve(spec.Measure, "privacy", 1, c.Privacy)
	if err != nil {
		return nil
	}
	return v
}

func analysisRevision(name string) int {
	if d, err := spec.Lookup(spec.Analysis, name); err == nil {
		return d.Revision
	}
	return 0
}

// CorpusKey names a privatized split (see corpusKey). Cells that
// privatize the same split alike (modes train and both) share it.
func (c *Config) CorpusKey(cell Cell, split string, in Inputs) string {
	return hash(corpusKey{
		Version: Version, Mechanism: cell.Mechanism, Params: cell.Resolved(), Epsilon: cell.Epsilon, Seed: cell.Seed, Split: split,
		Dataset: c.Dataset, Tokenizer: c.Tokenizer, Embedding: c.Embedding, MechEmbedding: c.MechEmbedding, Device: deviceKind(c.Device), Inputs: in,
		Stream: c.sharedStream(cell),
	})
}

// drawsKey is everything a word's sampled outputs depend on besides the
// word and the number of draws (a mechanism's streams are per word and
// per draw: mech.WordSource): the mechanism setting, ε and seed — the
// streams' names —, the vectors, the data and tokenizer only when the
// mechanism reads them (SanText over the task's words, SanText+,
// CusText), and the device. The analysis,
// the cell's mode and everything else of the config are not in it: an
// analysis cell and a utility cell's privacy measures at the same
// setting, ε and seed draw alike and share what was drawn.
type drawsKey struct {
	Version       string           `json:"version"`
	Mechanism     string           `json:"mechanism"`
	Params        spec.Values      `json:"params,omitempty"`
	Epsilon       float64          `json:"epsilon"`
	Seed          uint64           `json:"seed"`
	Stream        string           `json:"stream"`
	Dataset       *DatasetConfig   `json:"dataset,omitempty"`
	Tokenizer     string           `json:"tokenizer,omitempty"`
	Embedding     EmbeddingConfig  `json:"embedding"`
	MechEmbedding *EmbeddingConfig `json:"mechanism_embedding,omitempty"`
	Device        string           `json:"device"`
	Inputs        Inputs           `json:"inputs"`
}

// DrawsKey names the sampled outputs of words under cell's mechanism (see
// drawsKey); in are the checksums of the cell's view of the inputs.
func (c *Config) DrawsKey(cell Cell, in Inputs) string {
	k := drawsKey{Version: Version, Mechanism: cell.Mechanism, Params: cell.Resolved(), Epsilon: cell.Epsilon, Seed: cell.Seed, Stream: c.SourceStream(cell),
		Embedding: c.Embedding, MechEmbedding: c.MechEmbedding, Device: deviceKind(c.Device), Inputs: in}
	if cell.Mechanism == "" || cell.ReadsTask() {
		ds := c.Dataset
		k.Dataset, k.Tokenizer = &ds, c.Tokenizer
	} else {
		k.Inputs.Data = ""
	}
	return hash(k)
}

// modelKey is the classifier a cell trains: the model's kind and its
// parameters resolved, the swept ones at the cell's values.
func (c *Config) modelKey(cell Cell) modelKey {
	k := modelKey{Kind: c.Model.Kind}
	if d, err := spec.Lookup(spec.Model, c.Model.Kind); err == nil {
		k.Params, _ = d.Resolve(c.ModelParams(cell))
	}
	return k
}

// deviceKind is cpu or cuda: the device's index does not change results.
func deviceKind(d string) string {
	if strings.HasPrefix(d, "cuda") {
		return "cuda"
	}
	return d
}

func hash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("experiments: hash of %T: %v", v, err)) // only plain data is hashed
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// stageKey is everything a stage's result depends on: the stage and its
// resolved parameters, the result's coordinates, and the keys of the
// records it read (which hold everything those depend on).
type stageKey struct {
	Version string      `json:"version"`
	Stage   string      `json:"stage"`
	Params  spec.Values `json:"params"`
	Cell    Cell        `json:"cell"`
	Inputs  []string    `json:"inputs"`
}

// StageKey names the result of stage i at cell's coordinates computed
// from the records whose keys are inputs.
func (c *Config) StageKey(i int, cell Cell, inputs []string) string {
	return hash(stageKey{Version: Version, Stage: c.Stages[i].Kind, Params: c.StageParams(i), Cell: cell, Inputs: inputs})
}

// trainingKey is everything a trained classifier depends on: the
// training split as the cell's mode gives it (clean, or privatized: the
// privatized training split's key), the seed, the data, tokenizer and
// vectors, the model and the training settings. The evaluated split is
// not in it: one model serves every split it is evaluated on.
type trainingKey struct {
	Version   string          `json:"version"`
	Corpus    string          `json:"corpus,omitempty"` // the privatized training split's key; "" when clean
	Seed      uint64          `json:"seed"`
	Dataset   DatasetConfig   `json:"dataset"`
	Tokenizer string          `json:"tokenizer"`
	Embedding EmbeddingConfig `json:"embedding"`
	Model     modelKey        `json:"model"`
	Train     TrainConfig     `json:"train"`
	Device    string          `json:"device"`
	Inputs    Inputs          `json:"inputs"`
}

// ModelKey names the classifier a utility cell evaluates (see
// trainingKey): the baseline and the test-mode cells of a seed share the
// clean model; train- and both-mode cells of one setting, ε and seed
// share the model trained on their privatized training split. A sweep
// trains one model per distinct key. Analysis cells train none ("").
func (c *Config) ModelKey(cell Cell, in Inputs) string {
	if cell.Analysis != "" {
		return ""
	}
	if !cell.Privatizes("train") {
		in.MechEmbedding = "" // a clean model never reads the mechanisms' vectors
	}
	k := trainingKey{Version: Version, Seed: cell.Seed, Dataset: c.Dataset, Tokenizer: c.Tokenizer, Embedding: c.Embedding,
		Model: c.modelKey(cell), Train: c.TrainAt(cell), Device: deviceKind(c.Device), Inputs: in}
	if cell.Privatizes("train") {
		k.Corpus = c.CorpusKey(cell, "train", in)
	}
	return hash(k)
}

// GroupKey names the group a cell runs in: the cells that share a
// trained model (see ModelKey) — the baseline and test-mode cells of a
// seed, the train and both cells of a setting, ε and seed, which also
// share a privatized training split — so that a shard (one task of a
// cluster array) holds all of them and builds what they share once; an
// analysis cell is a group of its own, except under common_noise, where
// the analysis cells of the mechanisms that draw one noise at an ε and
// seed (SourceStream) are one group: the first of them draws for all;
// and so are their train and both cells (the first privatizes the
// training splits of all: runner's Session.Split). Their test-mode
// cells are the baseline's group anyway.
// Like Key, it is a content hash: ordering groups by it is independent
// of the order of the config's keys.
func (c *Config) GroupKey(cell Cell, in Inputs) string {
	if c.CommonNoise && cell.Mechanism != "" && (cell.Analysis != "" || cell.Privatizes("train")) {
		// the cells that draw one noise (SourceStream) draw it together:
		// their key without the mechanism (a train or both cell's: its
		// seed's clean model's), and the streams
		family := cell
		family.Mechanism, family.Params = "", nil
		base := c.Key(family, in)
		if cell.Analysis == "" {
			family.Mode = "none"
			base = c.ModelKey(family, in)
		}
		return hash(struct {
			Cell   string `json:"cell"`
			Stream string `json:"stream"`
		}{base, c.SourceStream(cell)})
	}
	if cell.Analysis != "" {
		return c.Key(cell, in)
	}
	return c.ModelKey(cell, in)
}

// Groups numbers the distinct group keys of a sweep (one per cell, see
// GroupKey) in sorted order: it returns each cell's group number and the
// number of groups. Shard i of n runs the groups whose number is i
// modulo n (see Shard); numbering by content key makes a cell's shard
// independent of the order of the config's keys and of its cells.
func Groups(keys []string) (group []int, n int) {
	distinct := slices.Clone(keys)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	group = make([]int, len(keys))
	for i, k := range keys {
		group[i], _ = slices.BinarySearch(distinct, k)
	}
	return group, len(distinct)
}

// Shard is the shard of n that runs group g.
func Shard(g, n int) int { return g % n }
