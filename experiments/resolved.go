package experiments

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/internal/yamldoc"
)

// Resolved returns the config as it runs — every default filled in, the
// overrides applied, the data root, output and cache folders absolute
// (for a portable config, Options.Portable: the data root the command
// gave written as "", the folders and the origin's file as given) —
// as a YAML config that Load reads back to the same cells and keys. Its
// origin key names the file and overrides it was resolved from (kept
// when the config is itself a resolved one). Worker processes and
// cluster tasks run from it, so editing the source file during a run
// changes nothing.
func (c *Config) Resolved() ([]byte, error) {
	r := c.Clone()
	if r.IsAnalysis() {
		r.Apply = nil // its cells do not read it, and validation refuses it there
	}
	if r.portable && r.dataGiven {
		r.Data = ""
	}
	for _, p := range []*string{&r.Data, &r.Output, &r.Cache} {
		if *p != "" && !r.portable {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return nil, err
			}
			*p = abs
		}
	}
	if r.Origin == nil {
		file, err := filepath.Abs(c.file)
		if err != nil {
			file = c.file
		}
		if r.portable {
			file = relative(file)
		}
		r.Origin = &Origin{File: file, SHA256: c.sum, Set: c.sets}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The resolved config of this run, written by xp: every default filled in.\n# Edit the source (origin.file) and run it again rather than this file.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("resolved config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Recorded is the config as a run's plan and records keep it: the config
// itself, or for a portable one (Options.Portable) the config with the
// data root the command gave written as "".
func (c *Config) Recorded() Config {
	r := *c
	if c.portable && c.dataGiven {
		r.Data = ""
	}
	return r
}

// relative is path relative to the working folder where it lies under
// it, else path.
func relative(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}

// Source is the file and checksum a run's provenance names: the original
// config of a resolved one.
func (c *Config) Source() (file, sha256 string) {
	if c.Origin != nil {
		return c.Origin.File, c.Origin.SHA256
	}
	return c.file, c.sum
}

// ReadSource reads the name and source (origin) of the resolved config a
// run wrote at path (a run folder's config.yaml), without validating the
// rest: a run folder written by an older xp still names its source.
func ReadSource(path string) (name, file string, err error) {
	b, err := xio.ReadFileMax(path, xio.MaxConfig)
	if err != nil {
		return "", "", err
	}
	var head struct {
		Name   string  `yaml:"name"`
		Origin *Origin `yaml:"origin"`
	}
	doc, err := yamldoc.Parse(path, b)
	if err != nil {
		return "", "", err
	}
	if err := doc.Decode(&head); err != nil {
		return "", "", yamlErr(path, err)
	}
	if head.Origin == nil {
		return head.Name, "", fmt.Errorf("%s: no origin", path)
	}
	return head.Name, head.Origin.File, nil
}
