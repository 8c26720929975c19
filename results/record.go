package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/spec"
)

// Record is one finished (or failed) cell: its numbers and where they came
// from. It is the only thing xp writes that a table is built from.
type Record struct {
	Key    string           `json:"key"`
	Cell   experiments.Cell `json:"cell"`
	Notion spec.Notion      `json:"notion,omitempty"` // the mechanism's guarantee; "" for the baseline
	Status string           `json:"status"`           // ok or failed
	Error  string           `json:"error,omitempty"`
	// Test and Valid score the model on the evaluated split and on the
	// validation split carved from the training split.
	Test      metrics.Classification `json:"test"`
	Valid     metrics.Classification `json:"valid"`
	BestEpoch int                    `json:"best_epoch"`
	Epochs    []metrics.Epoch        `json:"epochs,omitempty"`
	// Model is the key of the trained classifier the cell evaluated (see
	// experiments.ModelKey): cells sharing it share Valid, BestEpoch and
	// Epochs.
	Model string `json:"model,omitempty"`
	// Privacy reports each privatized split (train, valid, test).
	Privacy map[string]metrics.Privatization `json:"privacy,omitempty"`
	// Measures are the opt-in privacy measures of each privatized split
	// (config key privacy; analysis.Split), absent unless asked for.
	Measures map[string]metrics.Analysis `json:"measures,omitempty"`
	// Coverage says how the model saw each split's tokens.
	Coverage map[string]Coverage `json:"coverage,omitempty"`
	// Analysis holds an analysis cell's statistics (nil for utility cells),
	// or a stage's.
	Analysis *metrics.Analysis `json:"analysis,omitempty"`
	// Inputs are the keys of the records a stage read (nil for cells).
	Inputs []string `json:"inputs,omitempty"`
	// Ran are the keys of the utility cells a stage ran (or reused)
	// outside the plan to compute its result: matched-privacy's at the ε
	// it found.
	Ran []string `json:"ran,omitempty"`
	// Flags are the warnings raised when the cell ran (with the threshold
	// of that run; tables recompute them with theirs).
	Flags      []metrics.Flag `json:"flags,omitempty"`
	Provenance Provenance     `json:"provenance"`
}

// Coverage counts a split's tokens as the classifier received them: all,
// those that have a vector in the embedding, and those that reached the
// model as the unknown-word id.
type Coverage struct {
	Tokens  int64 `json:"tokens"`
	Vectors int64 `json:"with_vector"`
	Unknown int64 `json:"unknown"`
	// Truncated counts the pieces a pieces model's maximum length cut
	// (train.max_len); for such a model Tokens count the pieces it read
	// and Unknown those that are [UNK].
	Truncated int64 `json:"truncated,omitempty"`
}

// Provenance is what a record's numbers depend on and how they were made.
type Provenance struct {
	Config         string             `json:"config"`          // the source file
	ConfigSHA256   string             `json:"config_sha256"`   // of the source's bytes as read
	ResolvedSHA256 string             `json:"resolved_sha256"` // of the resolved config that ran (the run folder's config.yaml)
	Resolved       experiments.Config `json:"resolved"`        // after defaults and --set
	Inputs         experiments.Inputs `json:"inputs"`
	DataRoot       string             `json:"data_root"`
	Git            string             `json:"git"`       // commit ("" unknown)
	GitDirty       bool               `json:"git_dirty"` // uncommitted changes when run
	GoVersion      string             `json:"go"`
	Gotch          string             `json:"gotch"`
	Libtorch       string             `json:"libtorch"`
	Device         string             `json:"device"`
	Threads        int                `json:"threads"`
	RNG            string             `json:"rng"`
	Started        string             `json:"started"` // RFC 3339
	WallSeconds    float64            `json:"wall_seconds"`
	TokensPerSec   float64            `json:"privatized_tokens_per_sec,omitempty"`
	ExamplesPerSec float64            `json:"train_examples_per_sec,omitempty"` // of the model's training
	// MeasureSeconds is the time the opt-in privacy measures took (their
	// cost).
	MeasureSeconds float64 `json:"measure_seconds,omitempty"`
	// WorkUnits is an analysis cell's work in the unit estimates price it
	// by (analysis.Work): draws where its outputs were sampled, rows where
	// exact.
	WorkUnits int64 `json:"work_units,omitempty"`
	// ConstructSeconds is the time an analysis cell spent building its
	// mechanism's costly structure (CusText's mapping) where the cache did
	// not hold it: part of WallSeconds.
	ConstructSeconds float64 `json:"construct_seconds,omitempty"`
	// ModelReused says the cell evaluated a model already in the cache
	// (trained by an earlier cell, run or process) instead of training it.
	ModelReused  bool   `json:"model_reused,omitempty"`
	PeakRSSBytes int64  `json:"peak_rss_bytes"`
	Host         string `json:"host"`
	// Machine is the class of CPU the cell ran on (torchrt.Machine): its
	// model and widest vector extension, which decide libtorch's kernels.
	Machine string `json:"machine,omitempty"`
}

// Store is the folder of a run's records, one JSON file per cell named by
// its key, each written atomically (temporary file, fsync, rename): a
// killed run leaves whole records or none. Any number of processes may
// share one store (shards of a sweep on a shared folder): a record is
// written whole by one rename, and opening a store removes only the
// temporaries of processes that are gone.
type Store struct {
	dir string

	mu       sync.Mutex
	problems map[string]string // file → what is wrong with it
	readOnly bool
}

// OpenStore opens (creating) the record folder under the run's output,
// removes the temporaries that processes which are gone left behind, and
// notes files xp did not write (see Problems).
func OpenStore(out string) (*Store, error) { return openStore(out, true) }

// ReadStore opens the record folder under the run's output for reading:
// it creates and removes nothing (a dry run, xp status); a missing folder
// is an empty store. Put on it fails.
func ReadStore(out string) (*Store, error) { return openStore(out, false) }

func openStore(out string, write bool) (*Store, error) {
	dir := filepath.Join(out, "cells")
	s := &Store{dir: dir, problems: map[string]string{}, readOnly: !write}
	if write {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		if _, err := xio.CleanTemps(dir); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) && !write {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") && !xio.IsTemp(e.Name()) {
			s.note(e.Name(), "not written by xp; left alone")
		}
	}
	return s, nil
}

// Dir is the record folder.
func (s *Store) Dir() string { return s.dir }

// Problem is what is wrong with key's record file, if Get found it
// unusable (damaged, or another key's).
func (s *Store) Problem(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.problems[key+".json"]
	return p, ok
}

func (s *Store) path(key string) string { return filepath.Join(s.dir, key+".json") }

func (s *Store) note(name, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems[name] = why
}

// Problems lists the files of the store that are not usable records, one
// line each: damaged or foreign records are treated as missing (their
// cells run again and overwrite them); files xp did not write are left
// alone.
func (s *Store) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.problems)) {
		out = append(out, filepath.Join(s.dir, name)+": "+s.problems[name])
	}
	return out
}

// Put writes a record atomically. A failed record does not replace a
// successful one of the same key: the successful record stays.
func (s *Store) Put(r Record) error {
	if r.Key == "" {
		return errors.New("results: record without key")
	}
	if s.readOnly {
		return fmt.Errorf("results: %s opened for reading", s.dir)
	}
	if r.Status != "ok" {
		// A failed record never replaces a successful one of the same
		// cell (another process on the folder may have recorded it).
		if old, ok, err := s.Get(r.Key); err == nil && ok && old.Status == "ok" {
			return nil
		}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := xio.WriteFileAtomic(s.path(r.Key), append(b, '\n')); err != nil {
		return fmt.Errorf("results: write record: %w", err)
	}
	s.mu.Lock()
	delete(s.problems, r.Key+".json")
	s.mu.Unlock()
	return nil
}

// Get returns the record of key; ok is false when there is none, or when
// the file is not a whole record of that key (noted in Problems, and
// replaced when the cell runs again). err is for I/O failures only.
func (s *Store) Get(key string) (r Record, ok bool, err error) {
	b, err := xio.ReadFileMax(s.path(key), xio.MaxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("results: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		s.note(key+".json", fmt.Sprintf("damaged record (%v); its cell runs again", err))
		return Record{}, false, nil
	}
	if r.Key != key {
		s.note(key+".json", fmt.Sprintf("holds the record of another key (%.12s); its cell runs again", r.Key))
		return Record{}, false, nil
	}
	return r, true, nil
}

// Done reports whether key has a successful record (a failed one is
// retried by the next run).
func (s *Store) Done(key string) (bool, error) {
	r, ok, err := s.Get(key)
	return ok && r.Status == "ok", err
}

// Records returns the usable records of the given keys, in their order
// (keys without one are left out).
func (s *Store) Records(keys []string) ([]Record, error) {
	var out []Record
	for _, k := range keys {
		r, ok, err := s.Get(k)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// All returns every usable record, sorted by key.
func (s *Store) All() ([]Record, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) && s.readOnly {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var out []Record
	for _, e := range ents {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		r, ok, err := s.Get(key)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}
