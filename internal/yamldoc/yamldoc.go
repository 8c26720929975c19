// Package yamldoc owns how xp parses a YAML document a user gives it (a
// config, a --set value, a claims file, a run folder's config.yaml): with
// bounds on its size before anything else reads it. A document larger
// than MaxBytes is refused unread; one whose tree, once its aliases are
// expanded, has more than MaxNodes nodes (a "billion laughs" alias bomb of
// a few hundred bytes) is refused after at most MaxNodes steps, so that no
// later walk of the tree — xp's own checks, yaml.v3's decoding — can be
// made to run for hours by a small file.
package yamldoc

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/xp-nlp/xp/internal/srcerr"
)

// Bounds. A config of the papers' has a few hundred nodes and a few KB;
// the claims file a few thousand nodes.
const (
	MaxBytes = 4 << 20
	MaxNodes = 200_000
)

// Parse parses data (named path in errors) into its document node, after
// checking its size, and checks the tree's expanded size (Bounded).
// Errors name the file and, where known, the line.
func Parse(path string, data []byte) (*yaml.Node, error) {
	if len(data) > MaxBytes {
		return nil, srcerr.At(path, 0, "%d bytes: a YAML document here is at most %d", len(data), MaxBytes)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxErr(path, data, err)
	}
	if err := Bounded(path, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// syntaxErr places yaml.v3's "yaml: line N: msg" at path:N, and says so
// where that line holds a tab (yaml.v3 says only that a character "cannot
// start any token").
func syntaxErr(path string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return srcerr.Wrap(path, 0, err)
	}
	n, m, ok := strings.Cut(rest, ": ")
	line, aerr := strconv.Atoi(n)
	if !ok || aerr != nil {
		return srcerr.Wrap(path, 0, err)
	}
	if lines := bytes.Split(data, []byte("\n")); line >= 1 && line <= len(lines) && bytes.ContainsRune(lines[line-1], '\t') {
		m += ": the line holds a tab; YAML indents with spaces only"
	}
	return srcerr.At(path, line, "%s", m)
}

// Bounded refuses a tree with more than MaxNodes nodes once its aliases
// are expanded, naming the line of the first alias met past the bound
// (or of the node where the count ran out).
func Bounded(path string, n *yaml.Node) error {
	left := MaxNodes
	var at *yaml.Node // the outermost alias being expanded
	var count func(n *yaml.Node) bool
	count = func(n *yaml.Node) bool {
		if left--; left < 0 {
			return false
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			if at == nil {
				at = n
				defer func() {
					if left >= 0 {
						at = nil
					}
				}()
			}
			return count(n.Alias)
		}
		for _, c := range n.Content {
			if !count(c) {
				return false
			}
		}
		return true
	}
	if count(n) {
		return nil
	}
	line, how := n.Line, "its nodes"
	if at != nil {
		line, how = at.Line, "its aliases (the alias here)"
	}
	return srcerr.At(path, line, "%w: %s expand it past %d nodes", ErrTooLarge, how, MaxNodes)
}

// ErrTooLarge marks a document refused for its expanded size.
var ErrTooLarge = errors.New("document too large")
