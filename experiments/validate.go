package experiments

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/internal/show"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/spec"
)

// validate checks ranges and references, each error at its key. Files are
// checked by the runner (it needs the data root); mechanism and model
// parameters by their descriptors in spec; everything else is here.
func (c *Config) validate() error {
	checks := []func() error{c.validateAnalysis, c.validateData, c.validateMechanisms, c.validateModel, c.validatePrivacy, c.validateRun, c.validateStages}
	if c.IsAnalysis() {
		// Whether an analysis reads a dataset depends on its mechanisms.
		checks = []func() error{c.validateAnalysis, c.validateMechanisms, c.validateData, c.validateModel, c.validatePrivacy, c.validateRun, c.validateStages}
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateAnalysis checks the analysis kind and its parameters.
func (c *Config) validateAnalysis() error {
	if !c.IsAnalysis() {
		if c.has("analysis") {
			return c.errAt("analysis.kind is required (or leave analysis out: a classifier's utility)", "analysis")
		}
		return nil
	}
	d, err := spec.Lookup(spec.Analysis, c.Analysis.Kind)
	if err != nil {
		return c.errAt(err.Error(), "analysis", "kind")
	}
	v, err := d.Resolve(c.Analysis.Params)
	if err != nil {
		return c.paramErr(err, "analysis")
	}
	if _, ok := d.Param("from"); ok {
		switch from, given := v.String("from"), v.Has("list"); {
		case from == "list" && !given:
			return c.errAt(c.Analysis.Kind+": from: list needs list: [words…]", "analysis", "from")
		case from != "list" && given:
			return c.errAt(fmt.Sprintf("%s: list is given but words are sampled from %s (set from: list)", c.Analysis.Kind, from), "analysis", "list")
		}
	}
	if c.has("apply") {
		return c.errAt(fmt.Sprintf("apply has no meaning for analysis %s (it privatizes words, not a training or test split; a utility-loss stage adds utility cells)", c.Analysis.Kind), "apply")
	}
	return nil
}

// validatePrivacy checks the opt-in privacy measures of utility cells.
func (c *Config) validatePrivacy() error {
	if !c.has("privacy") {
		return nil
	}
	if c.IsAnalysis() {
		return c.errAt(fmt.Sprintf("privacy measures are computed beside utility cells; analysis %s computes its own statistics (plausible-deniability and bayes-adversary are these measures over a word sample or a dataset)", c.Analysis.Kind), "privacy")
	}
	d, _ := spec.Lookup(spec.Measure, "privacy")
	if _, err := d.Resolve(c.Privacy); err != nil {
		return c.paramErr(err, "privacy")
	}
	return nil
}

// validateStages checks each stage's kind, parameters and what it reads:
// a stage reads the analysis's cells or the stages before it.
func (c *Config) validateStages() error {
	if !c.IsAnalysis() {
		if c.has("stages") {
			return c.errAt("stages combine the cells of an analysis: they need an analysis section", "stages")
		}
		return nil
	}
	ad, _ := spec.Lookup(spec.Analysis, c.Analysis.Kind)
	var modes []string // apply modes of the utility-loss stages so far
	for i, st := range c.Stages {
		d, err := spec.Lookup(spec.Stage, st.Kind)
		if err != nil {
			return c.errAt(err.Error(), "stages", i, "kind")
		}
		v, err := d.Resolve(st.Params)
		if err != nil {
			return c.paramErr(err, "stages", i)
		}
		if slices.ContainsFunc(c.Stages[:i], func(o StageConfig) bool { return o.Kind == st.Kind }) {
			return c.errAt(fmt.Sprintf("stage %s is given twice", st.Kind), "stages", i, "kind")
		}
		if d.Reads != "" && ad.Name != d.Reads {
			return c.errAt(fmt.Sprintf("%s %s: it needs analysis %s (not %s)", d.Name, d.ReadsWhy, d.Reads, ad.Name), "stages", i, "kind")
		}
		if d.Pairs && !ad.Epsilon {
			return c.errAt(fmt.Sprintf("%s pairs mechanism cells with utility cells: analysis %s takes no mechanism", d.Name, ad.Name), "stages", i, "kind")
		}
		if d.Searches && v.Float("lo") >= v.Float("hi") {
			return c.errAt(fmt.Sprintf("%s: lo %v must be below hi %v", st.Kind, v.Float("lo"), v.Float("hi")), "stages", i, "lo")
		}
		if d.Utility != "" {
			if err := c.validateTask(); err != nil {
				return err
			}
		}
		if d.Utility == spec.UtilityApply {
			modes = append(modes, v.Strings("apply")...)
		}
		if st.Kind == "select" { // Algorithm 2's loss and start: its own rules
			if err := c.validateSelect(i, v, modes); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateSelect checks stage i, a select stage (Xu et al.'s Algorithm
// 2), against what comes before it: a loss that is the lexicon's needs a
// word-level dataset, one that is an apply mode's a utility-loss stage
// with that mode before it (modes), and procedure paper a start (t = 0)
// in every mechanism's grid.
func (c *Config) validateSelect(i int, v spec.Values, modes []string) error {
	loss, _ := strings.CutPrefix(v.String("loss"), "L_M ")
	switch {
	case (loss == "flip" || loss == "loss") && !wordLevel(c.Dataset.Name):
		return c.errAt(fmt.Sprintf("loss L_M %s is the opinion lexicon's; for dataset %s add a utility-loss stage before and use L_M both, train or test", loss, c.Dataset.Name), "stages", i, "loss")
	case loss != "flip" && loss != "loss" && !slices.Contains(modes, loss):
		return c.errAt(fmt.Sprintf("loss L_M %s needs a utility-loss stage before this one with %s in its apply", loss, loss), "stages", i, "loss")
	}
	if v.String("procedure") == "paper" {
		if m := c.withoutStart(); m >= 0 {
			return c.errAt(fmt.Sprintf("select procedure paper starts from t = 0 (Laplace) and doubles ε: mechanism %s has no setting with t = 0 (add 0 to its grid's t, or give procedure: grid)", c.Mechanisms[m].Name), "mechanisms", m)
		}
	}
	return nil
}

func (c *Config) validateData() error {
	d := c.Dataset
	if c.IsAnalysis() {
		switch {
		case d.Name == "" && c.ReadsDataset():
			return c.errAt(fmt.Sprintf("analysis %s with these mechanisms reads a dataset (word counts): dataset.name is required", c.Analysis.Kind), "analysis", "kind")
		case d.Name == "":
			return c.validateEmbedding()
		}
		if _, err := datasets.SpecOf(d.Name); err != nil {
			return c.errAt(err.Error(), "dataset", "name")
		}
		if err := c.validateSource(); err != nil {
			return err
		}
		if d.Train == "" {
			return c.errAt("dataset.train is empty (an analysis reads the words of this split)", "dataset", "train")
		}
		if d.TrainLimit < 0 {
			return c.errAt("train_limit must be ≥ 0 (0: all)", "dataset", "train_limit")
		}
		return c.validateEmbedding()
	}
	return c.validateTask()
}

// validateSource checks the keys that say where a dataset's examples
// come from: a user's table needs its file, its column keys belong to it
// alone, and test_fraction carves only corpora published without a test
// split (table, folder).
func (c *Config) validateSource() error {
	d := c.Dataset
	sp, _ := datasets.SpecOf(d.Name) // the callers checked the name
	switch {
	case sp.Columns && d.Path == "":
		return c.errAt("dataset table reads your file: set dataset.path (a .csv, .tsv or .jsonl file, optionally .gz)", "dataset", "name")
	case !sp.Columns && (d.TestPath != "" || d.Text != "" || d.Text2 != "" || d.Label != ""):
		for _, k := range []struct{ key, v string }{{"test_path", d.TestPath}, {"text", d.Text}, {"text2", d.Text2}, {"label", d.Label}} {
			if k.v != "" {
				return c.errAt(fmt.Sprintf("dataset.%s belongs to dataset table (a CSV, TSV or JSONL file), not %s", k.key, d.Name), "dataset", k.key)
			}
		}
	case len(d.Labels) > 0 && !sp.Own:
		return c.errAt(fmt.Sprintf("dataset.labels pins the labels of your own data (table, folder); %s's labels are its own", d.Name), "dataset", "labels")
	case len(d.Labels) == 1 || len(d.Labels) > MaxLabels:
		return c.errAt(fmt.Sprintf("dataset.labels: %d labels, want 2 to %d", len(d.Labels), MaxLabels), "dataset", "labels")
	}
	seen := map[string]bool{}
	for i, l := range d.Labels {
		switch {
		case l == "" || strings.TrimSpace(l) != l:
			return c.errAt(fmt.Sprintf("dataset.labels: %q: a label is not empty and has no spaces around it (xp trims them from the data)", l), "dataset", "labels", i)
		case utf8.RuneCountInString(l) > MaxName || !utf8.ValidString(l) || strings.IndexFunc(l, show.Unsafe) >= 0:
			return c.errAt(fmt.Sprintf("dataset.labels: %q: at most %d characters, no control characters or bidirectional overrides", l, MaxName), "dataset", "labels", i)
		case seen[l]:
			return c.errAt(fmt.Sprintf("dataset.labels: %q repeats", l), "dataset", "labels", i)
		}
		seen[l] = true
	}
	switch {
	case d.TestFraction != 0 && !(d.TestFraction > 0 && d.TestFraction < 1):
		return c.errAt(fmt.Sprintf("test_fraction %v outside (0, 1)", d.TestFraction), "dataset", "test_fraction")
	case d.TestFraction != 0 && !sp.Own:
		return c.errAt(fmt.Sprintf("test_fraction carves a test split from table or folder data; %s has its own test split (dataset.test)", d.Name), "dataset", "test_fraction")
	case d.TestFraction != 0 && d.TestPath != "":
		return c.errAt("test_fraction and test_path both give a test split: keep one", "dataset", "test_fraction")
	case d.TestPath != "" && xio.SameFile(c.Path(d.TestPath), c.Path(d.Path)):
		return c.errAt(fmt.Sprintf("dataset.test_path is the training file %s: a model evaluated on its own training data measures nothing", d.Path), "dataset", "test_path")
	}
	return nil
}

// validateTask checks the dataset as a classification task: splits to
// train and evaluate on.
func (c *Config) validateTask() error {
	d := c.Dataset
	if _, err := datasets.SpecOf(d.Name); err != nil {
		return c.errAt(err.Error(), "dataset", "name")
	}
	if wordLevel(d.Name) {
		return c.errAt(fmt.Sprintf("dataset %s is word-level: it has no train/test classification task for xp run", d.Name), "dataset", "name")
	}
	if err := c.validateSource(); err != nil {
		return err
	}
	sp, _ := datasets.SpecOf(d.Name)
	switch {
	case sp.Columns && d.TestPath == "" && d.TestFraction == 0:
		return c.errAt("dataset table: give its test file (test_path) or carve a test split from it (test_fraction)", "dataset", "name")
	case d.Train == "":
		return c.errAt("dataset.train is empty", "dataset", "train")
	case d.Test == "":
		return c.errAt("dataset.test is empty", "dataset", "test")
	case d.Test == d.Train:
		return c.errAt(fmt.Sprintf("dataset.test is the training split %q: a model evaluated on its own training data measures nothing", d.Test), "dataset", "test")
	case !(d.ValidFraction > 0 && d.ValidFraction < 1):
		return c.errAt(fmt.Sprintf("valid_fraction %v outside (0, 1)", d.ValidFraction), "dataset", "valid_fraction")
	case d.TrainLimit < 0:
		return c.errAt("train_limit must be ≥ 0 (0: all)", "dataset", "train_limit")
	case d.TestLimit < 0:
		return c.errAt("test_limit must be ≥ 0 (0: all)", "dataset", "test_limit")
	}
	return c.validateEmbedding()
}

func (c *Config) validateEmbedding() error {
	if !slices.Contains(datasets.TokenizerNames(), c.Tokenizer) {
		return c.errAt(fmt.Sprintf("tokenizer %q: want %s (default: GloVe-style, lowercased; cased: the same keeping case)", c.Tokenizer, strings.Join(datasets.TokenizerNames(), ", ")), "tokenizer")
	}
	if err := c.validateVectors("embedding", c.Embedding); err != nil {
		return err
	}
	if c.MechEmbedding != nil {
		return c.validateVectors("mechanism_embedding", *c.MechEmbedding)
	}
	return nil
}

// validateVectors checks a section naming word vectors (embedding,
// mechanism_embedding).
func (c *Config) validateVectors(key string, e EmbeddingConfig) error {
	switch {
	case e.Path == "":
		return c.errAt(key+".path is required", key)
	case !slices.Contains([]string{"", "auto", "glove", "vec", "word2vec-binary"}, e.Format):
		return c.errAt(fmt.Sprintf("%s format %q: want auto, glove, vec or word2vec-binary", key, e.Format), key, "format")
	case e.Top < 0:
		return c.errAt(key+".top must be ≥ 0 (0: all)", key, "top")
	case !slices.Contains([]string{"", "all", "dataset"}, e.Vocabulary):
		return c.errAt(fmt.Sprintf("%s.vocabulary %q: want all or dataset", key, e.Vocabulary), key, "vocabulary")
	case e.Vocabulary == "dataset" && !c.ReadsDataset():
		return c.errAt(key+".vocabulary dataset: this config reads no dataset", key, "vocabulary")
	}
	return nil
}

func (c *Config) validateMechanisms() error {
	if c.IsAnalysis() {
		d, _ := spec.Lookup(spec.Analysis, c.Analysis.Kind)
		switch {
		case d.Epsilon && len(c.Mechanisms) == 0:
			return c.errAt(fmt.Sprintf("analysis %s runs mechanisms: give at least one", d.Name), "analysis", "kind")
		case !d.Epsilon && len(c.Mechanisms) > 0:
			return c.errAt(fmt.Sprintf("analysis %s reads only the vectors: it takes no mechanisms", d.Name), "mechanisms")
		}
		for i, m := range c.Mechanisms {
			if err := c.validateMechanism(i, m); err != nil {
				return err
			}
			if d.Mechanisms != nil && !slices.Contains(d.Mechanisms, m.Name) {
				return c.errAt(fmt.Sprintf("analysis %s %s: mechanism %s has none", d.Name, d.MechanismsWhy, m.Name), "mechanisms", i, "name")
			}
		}
		return nil
	}
	if len(c.Apply) == 0 {
		return c.errAt("apply is empty: give at least one of none, train, test, both", "apply")
	}
	for i, a := range c.Apply {
		if !slices.Contains(Modes, a) {
			return c.errAt(fmt.Sprintf("apply %q: want none, train, test or both", a), "apply", i)
		}
		if slices.Index(c.Apply, a) != i {
			return c.errAt(fmt.Sprintf("apply lists %s twice", a), "apply", i)
		}
	}
	private := slices.ContainsFunc(c.Apply, func(a string) bool { return a != "none" })
	switch {
	case private && len(c.Mechanisms) == 0:
		return c.errAt("apply lists privatized modes but no mechanisms are given", "apply")
	case !private && len(c.Mechanisms) > 0:
		return c.errAt("mechanisms are given but apply has no privatized mode (train, test or both): they would never run", "apply")
	}
	for i, m := range c.Mechanisms {
		if err := c.validateMechanism(i, m); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateMechanism(i int, m MechConfig) error {
	d, err := spec.Lookup(spec.Mechanism, m.Name)
	if err != nil {
		return c.errAt(err.Error(), "mechanisms", i, "name")
	}
	if d.Epsilon && len(m.Epsilon) == 0 {
		return c.errAt(fmt.Sprintf("mechanism %s: epsilon list is empty", m.Name), "mechanisms", i, "epsilon")
	}
	if !d.Epsilon && len(m.Epsilon) > 0 {
		return c.errAt(fmt.Sprintf("%s takes no ε", m.Name), "mechanisms", i, "epsilon")
	}
	if len(m.Epsilon) > MaxEpsilons {
		return c.errAt(fmt.Sprintf("mechanism %s: %d ε, at most %d", m.Name, len(m.Epsilon), MaxEpsilons), "mechanisms", i, "epsilon")
	}
	seen := make(map[float64]bool, len(m.Epsilon))
	for j, e := range m.Epsilon {
		if err := spec.CheckEpsilon(m.Name, e); err != nil {
			return c.errAt(err.Error(), "mechanisms", i, "epsilon", j)
		}
		if seen[e] {
			return c.errAt(fmt.Sprintf("%s: ε = %v repeats", m.Name, e), "mechanisms", i, "epsilon", j)
		}
		seen[e] = true
	}
	if _, err := d.Resolve(m.Params); err != nil {
		return c.paramErr(err, "mechanisms", i, "params")
	}
	for _, k := range slices.Sorted(maps.Keys(m.Grid)) {
		list, ok := m.Grid[k].([]any)
		if !ok || len(list) == 0 {
			return c.errAt(fmt.Sprintf("grid %s: want a non-empty list of values", k), "mechanisms", i, "grid", k)
		}
		if len(list) > MaxEpsilons {
			return c.errAt(fmt.Sprintf("grid %s: %d values, at most %d", k, len(list), MaxEpsilons), "mechanisms", i, "grid", k)
		}
		p, known := d.Param(k)
		switch {
		case !known:
			_, err := d.Resolve(map[string]any{k: list[0]})
			return c.paramErr(err, "mechanisms", i, "grid")
		case !p.Grid:
			return c.errAt(fmt.Sprintf("%s: parameter %s cannot be swept in a grid", m.Name, k), "mechanisms", i, "grid", k)
		}
		if _, dup := m.Params[k]; dup {
			return c.errAt(fmt.Sprintf("%s is both a fixed parameter and a grid key", k), "mechanisms", i, "grid", k)
		}
		for j, x := range list {
			if _, err := p.Normalize(x); err != nil {
				return c.errAt(fmt.Sprintf("%s: grid value %s = %v, want %s", m.Name, k, x, p.Want()), "mechanisms", i, "grid", k, j)
			}
		}
	}
	for _, point := range gridPoints(m) {
		if _, err := d.Resolve(point); err != nil {
			return c.paramErr(err, "mechanisms", i, "grid")
		}
	}
	return nil
}

// paramErr places a descriptor's error at the parameter it names, under
// the given parent key (params or grid of a mechanism, or the model).
func (c *Config) paramErr(err error, parent ...any) error {
	var se *spec.Error
	if errors.As(err, &se) && se.Param != "" {
		path := append(slices.Clip(parent), se.Param)
		if c.has(path...) {
			return c.errAt(err.Error(), path...)
		}
		// A grid value clashing with a fixed parameter: say so at the grid.
		if len(parent) > 0 && parent[len(parent)-1] == "grid" {
			alt := append(slices.Clip(parent[:len(parent)-1]), "params", se.Param)
			if c.has(alt...) {
				return c.errAt(err.Error(), alt...)
			}
		}
	}
	return c.errAt(err.Error(), parent...)
}

func (c *Config) validateModel() error {
	d, err := spec.Lookup(spec.Model, c.Model.Kind)
	if err != nil {
		return c.errAt(err.Error(), "model", "kind")
	}
	if err := c.validateModelGrid(); err != nil {
		return err
	}
	for _, point := range c.ModelPoints() {
		if _, err := d.Resolve(c.ModelParams(Cell{Model: point})); err != nil {
			return c.paramErr(err, "model")
		}
	}
	if sel := c.SelectModel; sel != nil {
		names, _ := c.ModelGrid()
		switch {
		case sel.BestBy != "valid":
			return c.errAt(fmt.Sprintf("select.best_by = %q: the one criterion is valid (the highest mean validation accuracy)", sel.BestBy), "select", "best_by")
		case len(names) == 0:
			return c.errAt("select chooses among the points of a model sweep, and no model parameter is a list (give one as [a, b])", "select")
		}
	}
	for _, point := range c.ModelPoints() {
		t := c.TrainAt(Cell{Model: point})
		switch {
		case t.Epochs < 1:
			return c.errAt(fmt.Sprintf("train.epochs = %d, want ≥ 1", t.Epochs), "train", "epochs")
		case t.Batch < 1:
			return c.errAt(fmt.Sprintf("train.batch = %d, want ≥ 1", t.Batch), "train", "batch")
		case t.MaxLen < 1:
			return c.errAt(fmt.Sprintf("train.max_len = %d, want ≥ 1", t.MaxLen), "train", "max_len")
		case t.Patience < 0:
			return c.errAt(fmt.Sprintf("train.patience = %d, want ≥ 0 (0: never stop early)", t.Patience), "train", "patience")
		}
		for _, s := range t.settings() {
			if *s.v > spec.MaxInt {
				return c.errAt(fmt.Sprintf("train.%s = %d, at most %d", s.name, *s.v, spec.MaxInt), "train", s.name)
			}
		}
	}
	return nil
}

// validDevice: cpu, auto, cuda or cuda:N.
func validDevice(d string) bool {
	if d == "cpu" || d == "auto" || d == "cuda" {
		return true
	}
	n, ok := strings.CutPrefix(d, "cuda:")
	_, err := strconv.ParseUint(n, 10, 32)
	return ok && err == nil
}

// Bounds of a config, so that a typo or a hostile file cannot make xp
// start a million threads or plan for minutes: MaxSeeds seeds, MaxEpsilons
// ε (and values of each grid parameter) per mechanism, a name of MaxName
// characters, and threads and workers
// up to threadsPerCore per core of the machine.
const (
	MaxSeeds       = 10_000
	MaxEpsilons    = 10_000
	MaxName        = 200
	MaxLabels      = 10_000
	threadsPerCore = 4
)

// MaxThreads is the most threads (or workers) a config may ask for here.
func MaxThreads() int { return threadsPerCore * runtime.NumCPU() }

func (c *Config) validateRun() error {
	if len(c.Seeds) == 0 {
		return c.errAt("seeds is empty: give at least one seed", "seeds")
	}
	if len(c.Seeds) > MaxSeeds {
		return c.errAt(fmt.Sprintf("%d seeds, at most %d", len(c.Seeds), MaxSeeds), "seeds")
	}
	seen := make(map[uint64]bool, len(c.Seeds))
	for i, s := range c.Seeds {
		if seen[s] {
			return c.errAt(fmt.Sprintf("seed %d repeats", s), "seeds", i)
		}
		seen[s] = true
	}
	switch {
	case !validDevice(c.Device):
		return c.errAt(fmt.Sprintf("device %q: want cpu, cuda, cuda:N or auto", c.Device), "device")
	case c.Threads < 0:
		return c.errAt(fmt.Sprintf("threads = %d, want ≥ 0 (0: one per core)", c.Threads), "threads")
	case c.Threads > MaxThreads():
		return c.errAt(fmt.Sprintf("threads = %d, at most %d per core (%d on this machine)", c.Threads, threadsPerCore, MaxThreads()), "threads")
	case c.Workers < 1:
		return c.errAt(fmt.Sprintf("workers = %d, want ≥ 1", c.Workers), "workers")
	case c.Workers > MaxThreads():
		return c.errAt(fmt.Sprintf("workers = %d, at most %d per core (%d on this machine)", c.Workers, threadsPerCore, MaxThreads()), "workers")
	case c.Output == "":
		return c.errAt("output is empty", "output")
	case c.Cache == "":
		return c.errAt("cache is empty", "cache")
	case !(c.Checks.MaxOOV >= 0 && c.Checks.MaxOOV <= 1):
		return c.errAt(fmt.Sprintf("checks.max_oov = %v, want a share in [0, 1]", c.Checks.MaxOOV), "checks", "max_oov")
	}
	switch {
	case utf8.RuneCountInString(c.Name) > MaxName:
		return c.errAt(fmt.Sprintf("name: %d characters, at most %d (it names the output folder and every record)", utf8.RuneCountInString(c.Name), MaxName), "name")
	case strings.ContainsAny(c.Name, "/\\"):
		return c.errAt(fmt.Sprintf("name %q: no slashes (it names the output folder)", c.Name), "name")
	case c.Name == "." || c.Name == "..":
		return c.errAt(fmt.Sprintf("name %q: a folder's name, not . or .. (it names the output folder)", c.Name), "name")
	case !utf8.ValidString(c.Name) || strings.IndexFunc(c.Name, show.Unsafe) >= 0:
		return c.errAt(fmt.Sprintf("name %q: no control characters or bidirectional overrides (it names the output folder)", c.Name), "name")
	}
	return nil
}

// withoutStart returns the index of a mechanism none of whose settings is
// a start of Algorithm 2 (t = 0; a mechanism without t is its own
// start), or −1.
func (c *Config) withoutStart() int {
	started := map[string]bool{}
	for _, cell := range c.analysisCells() {
		if IsStart(cell) {
			started[cell.Mechanism] = true
		}
	}
	for i, m := range c.Mechanisms {
		if !started[m.Name] {
			return i
		}
	}
	return -1
}

// IsStart reports whether a cell's setting is where Xu et al.'s Algorithm
// 2 starts: t = 0, the Laplace mechanism (a mechanism without t is its
// own start).
func IsStart(cell Cell) bool {
	v := cell.Resolved()
	return !v.Has("t") || (v.Float("t") == 0 && !v.Has("t_r") && !v.Has("rank"))
}

// wordLevel reports whether the named dataset is a labelled word list (a
// polarity lexicon) rather than a classification task.
func wordLevel(name string) bool {
	sp, err := datasets.SpecOf(name)
	return err == nil && sp.WordLevel
}
