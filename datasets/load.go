package datasets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/xp-nlp/xp/internal/near"
)

// EnvRoot is the environment variable that names the data root.
const EnvRoot = "XP_DATA"

// RootFromEnv returns the data root named by XP_DATA, or "" when unset.
// A command-line --data flag, where there is one, overrides it.
func RootFromEnv() string { return os.Getenv(EnvRoot) }

// Options tune how a corpus is read.
type Options struct {
	// Path overrides where the corpus is found (a file, folder or archive);
	// empty looks in the conventional places under the data root.
	Path string
	// Seed drives the seeded splits (see Carving); it is independent of
	// the seeds of mechanisms and models.
	Seed uint64
	// Carve replaces the corpus's standard carvings (nil keeps them; an
	// empty non-nil slice keeps only the published splits).
	Carve []Carving
	// EnronUsers is the number of authors for Enron (the N users with the
	// most sent mail); 0 means 10.
	EnronUsers int
	// Table names the columns and test file of a user's table (dataset
	// "table").
	Table TableOptions
	// Labels pins the label set of a user's dataset (table, folder), in
	// index order: labels outside it are refused, and labels that differ
	// only by case, or that a split lacks, are accepted (labelUse.labels).
	Labels []string
}

// Carving moves a seeded fraction of one split into a new one (see
// Dataset.Carve). From may name several splits joined by "+" (for example
// "train+test" to pool IMDb's halves before a 90/10 split): they are
// merged into the first before carving.
type Carving struct {
	From, To string
	Fraction float64
}

// Spec describes a corpus xp knows how to load.
type Spec struct {
	Name   string
	Title  string
	Labels []string
	Pair   bool
	// WordLevel: each example is one word, taken whole (never split by
	// the sentence tokenizer), as the opinion lexicon's entries are; such
	// a dataset is a word list with labels (a polarity lexicon), not a
	// classification task.
	WordLevel bool
	// Own marks a user's own data: dataset.labels pins its labels, and
	// test_fraction carves its test split where it has none. Columns: it
	// is read from one file with column keys (dataset.path, test_path,
	// text, text2, label).
	Own, Columns bool
	// Train and Test are the splits a config reads when it names none
	// ("": train and test).
	Train, Test string
	// Attacker names the private attribute the label is, when a
	// classifier of it is an attacker (Enron: authorship): tables then
	// report attacker accuracy, lower being more private.
	Attacker string
	Splits   string    // the splits it is published with, in words
	Carve    []Carving // standard carvings applied after loading (the papers' splits)
	Default  []string  // where under the data root it is looked for, first found wins
	load     func(ctx context.Context, path string, opt Options) (*Dataset, error)
}

// Specs returns every corpus xp can load, by name: one value each,
// declared in the corpus's own file beside its loader.
func Specs() []Spec {
	return []Spec{imdbSpec, sst2Spec, qnliSpec, twitterSpec, opinionSpec, enronSpec, folderSpec, tableSpec}
}

var sentiment = []string{"negative", "positive"}

// SpecOf returns the spec of the named corpus.
func SpecOf(name string) (Spec, error) {
	var names []string
	for _, s := range Specs() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Spec{}, fmt.Errorf("unknown dataset %q%s (known: %s)", name, near.DidYouMean(name, names), strings.Join(names, ", "))
}

// Locate returns where the named corpus is under root (or opt.Path).
func Locate(root, name string, opt Options) (string, error) {
	spec, err := SpecOf(name)
	if err != nil {
		return "", err
	}
	if opt.Path != "" {
		if _, err := os.Stat(opt.Path); err != nil {
			return "", fmt.Errorf("dataset %s: %w", name, err)
		}
		return opt.Path, nil
	}
	if len(spec.Default) == 0 {
		return "", fmt.Errorf("dataset %s: needs a path", name)
	}
	if root == "" {
		return "", fmt.Errorf("dataset %s: no data root (set %s or pass --data)", name, EnvRoot)
	}
	for _, rel := range spec.Default {
		p := filepath.Join(root, rel)
		if _, err := os.Stat(p); err == nil {
			return p, partlyUnpacked(root, rel, name)
		}
	}
	return "", fmt.Errorf("dataset %s not found under %s (looked for %s); `xp data get %s` fetches it",
		name, root, strings.Join(spec.Default, ", "), name)
}

// Unpacking is the file an extraction (`xp data get`) keeps in a
// dataset's folder under the data root while it writes the folder's
// files, and removes once every file is in place: a folder that holds it
// is partly unpacked (stopped, refused or out of space) and is not read.
const Unpacking = ".xp-unpacking"

// partlyUnpacked refuses a corpus found at rel under root when the folder
// it is in, or one above it below root, holds the Unpacking mark.
func partlyUnpacked(root, rel, name string) error {
	for dir := filepath.Clean(rel); dir != "." && dir != string(filepath.Separator); dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(root, dir, Unpacking)); err == nil {
			return fmt.Errorf("dataset %s: %s is partly unpacked (an extraction stopped before it finished): `xp data get %s` completes it", name, filepath.Join(root, dir), name)
		}
	}
	return nil
}

// Load reads the named corpus from the data root and applies its standard
// carvings (or opt.Carve) with opt.Seed.
func Load(ctx context.Context, root, name string, opt Options) (*Dataset, error) {
	spec, err := SpecOf(name)
	if err != nil {
		return nil, err
	}
	path, err := Locate(root, name, opt)
	if err != nil {
		return nil, err
	}
	d, err := spec.load(ctx, path, opt)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	d.Name, d.Source = name, path
	if d.Labels == nil {
		d.Labels = spec.Labels
	}
	d.Pair = d.Pair || spec.Pair
	d.WordLevel = d.WordLevel || spec.WordLevel
	carve := spec.Carve
	if opt.Carve != nil {
		carve = opt.Carve
	}
	for _, c := range carve {
		from := strings.Split(c.From, "+")
		if len(from) > 1 {
			if err := d.Merge(from[0], from...); err != nil {
				return nil, fmt.Errorf("load %s: %w", name, err)
			}
		}
		if err := d.Carve(from[0], c.To, c.Fraction, opt.Seed); err != nil {
			return nil, fmt.Errorf("load %s: %w", name, err)
		}
	}
	return d, nil
}

// labelIndex maps a label name to its index, with a helpful error.
func labelIndex(labels []string, s string) (int, error) {
	for i, l := range labels {
		if l == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown label %q (want one of %s)", s, strings.Join(labels, ", "))
}

// checkCtx returns ctx's error every 1024 calls, cheaply.
func checkCtx(ctx context.Context, n int) error {
	if n&1023 == 0 {
		return ctx.Err()
	}
	return nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var errEmpty = errors.New("empty file")
