package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/experiments"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/mech"
	"github.com/xp-nlp/xp/models"
)

// Record is one finished (or failed) cell: its numbers and where they came
// from. It is the only thing xp writes that a table is built from.
type Record struct {
	Key        string                 `json:"key"`
	Cell       experiments.Cell       `json:"cell"`
	Status     string                 `json:"status"` // ok or failed
	Error      string                 `json:"error,omitempty"`
	Test       models.Metrics         `json:"test"`
	Valid      models.Metrics         `json:"valid"`
	BestEpoch  int                    `json:"best_epoch"`
	Epochs     []models.EpochStats    `json:"epochs,omitempty"`
	Privacy    map[string]mech.Report `json:"privacy,omitempty"` // per privatized split
	Provenance Provenance             `json:"provenance"`
}

// Provenance is what a record's numbers depend on and how they were made.
type Provenance struct {
	Config         string             `json:"config"` // file
	ConfigSHA256   string             `json:"config_sha256"`
	Resolved       experiments.Config `json:"resolved"` // after defaults and --set
	Inputs         experiments.Inputs `json:"inputs"`
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
	ExamplesPerSec float64            `json:"train_examples_per_sec,omitempty"`
	PeakRSSBytes   int64              `json:"peak_rss_bytes"`
	Host           string             `json:"host"`
}

// Store is the folder of a run's records, one JSON file per cell named by
// its key, each written atomically (temporary file, fsync, rename): a
// killed run leaves whole records or none.
type Store struct{ dir string }

// OpenStore opens (creating) the record folder under the run's output and
// removes temporary files an interrupted write left behind.
func OpenStore(out string) (*Store, error) {
	dir := filepath.Join(out, "cells")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return &Store{dir: dir}, nil
}

// Dir is the record folder.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(key string) string { return filepath.Join(s.dir, key+".json") }

// Put writes a record atomically.
func (s *Store) Put(r Record) error {
	if r.Key == "" {
		return errors.New("results: record without key")
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return xio.WriteFileAtomic(s.path(r.Key), append(b, '\n'))
}

// Get returns the record of key; ok is false when there is none.
func (s *Store) Get(key string) (r Record, ok bool, err error) {
	b, err := os.ReadFile(s.path(key))
	if errors.Is(err, os.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, false, fmt.Errorf("results: %s: %w", s.path(key), err)
	}
	if r.Key != key {
		return r, false, fmt.Errorf("results: %s holds the record of %s", s.path(key), r.Key)
	}
	return r, true, nil
}

// Done reports whether key has a successful record (a failed one is
// retried by the next run).
func (s *Store) Done(key string) (bool, error) {
	r, ok, err := s.Get(key)
	return ok && r.Status == "ok", err
}

// All returns every record, sorted by key.
func (s *Store) All() ([]Record, error) {
	ents, err := os.ReadDir(s.dir)
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
