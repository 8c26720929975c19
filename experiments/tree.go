package experiments

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/xp-nlp/xp/internal/srcerr"
)

// checkTree checks the config's document against the Config type before
// it is decoded, so that every error has a position: unknown keys, keys
// without a value, a list where a mapping belongs (or the reverse), a
// non-integer for an integer key (YAML would truncate 1.9 to 1), and NaN
// or an infinity in any number.
func (c *Config) checkTree() error {
	return c.walk(c.root, reflect.TypeOf(Config{}), nil)
}

func (c *Config) walk(n *yaml.Node, t reflect.Type, path []string) error {
	key := strings.Join(path, ".")
	n = deref(n)
	if n.Tag == "!!null" {
		return c.errNode(n, "%s has no value", key)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return c.walk(n, t.Elem(), path)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return c.errNode(n, "%s: want a mapping of keys, got %s", key, describe(n))
		}
		fields, inline := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			sub := append(slices.Clip(path), k.Value)
			f, ok := fields[k.Value]
			switch {
			case ok && f.Tag.Get("sweep") == "list" && deref(v).Kind == yaml.SequenceNode:
				if err := c.walk(v, reflect.SliceOf(f.Type), sub); err != nil { // a swept setting: a list of its values
					return err
				}
			case ok:
				if err := c.walk(v, f.Type, sub); err != nil {
					return err
				}
			case inline != nil:
				if err := c.walk(v, inline.Type.Elem(), sub); err != nil {
					return err
				}
			default:
				known := make([]string, 0, len(fields))
				for name := range fields {
					if name != "origin" {
						known = append(known, name)
					}
				}
				slices.Sort(known)
				where := "the config"
				if key != "" {
					where = key
				}
				return c.errNode(k, "unknown key %q in %s (known: %s)%s", k.Value, where, strings.Join(known, ", "), suggest(k.Value, path, known))
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return c.errNode(n, "%s: want a list, got %s", key, describe(n))
		}
		for i, e := range n.Content {
			if err := c.walk(e, t.Elem(), append(slices.Clip(path), strconv.Itoa(i))); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return c.errNode(n, "%s: want a mapping, got %s", key, describe(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := c.walk(n.Content[i+1], t.Elem(), append(slices.Clip(path), n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Interface:
		return c.walkAny(n, path)
	default:
		return c.scalar(n, t.Kind(), key)
	}
	return nil
}

// walkAny checks a free-form value (mechanism and model parameters): any
// shape, but numbers must be finite. Their names and types are spec's to
// check.
func (c *Config) walkAny(n *yaml.Node, path []string) error {
	n = deref(n)
	for i, e := range n.Content {
		sub := path
		if n.Kind == yaml.MappingNode {
			if i%2 == 0 {
				continue
			}
			sub = append(slices.Clip(path), n.Content[i-1].Value)
		} else {
			sub = append(slices.Clip(path), strconv.Itoa(i))
		}
		if err := c.walkAny(e, sub); err != nil {
			return err
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
		return c.finite(n, strings.Join(path, "."))
	}
	return nil
}

func (c *Config) scalar(n *yaml.Node, k reflect.Kind, key string) error {
	if n.Kind != yaml.ScalarNode {
		return c.errNode(n, "%s: want a single value, got %s", key, describe(n))
	}
	switch k {
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n.Tag != "!!int" {
			return c.errNode(n, "%s: %s is not an integer%s", key, n.Value, unquote(n, "!!int"))
		}
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		if n.Tag != "!!int" || strings.HasPrefix(strings.TrimSpace(n.Value), "-") {
			return c.errNode(n, "%s: %s is not a non-negative integer", key, n.Value)
		}
	case reflect.Float64, reflect.Float32:
		if n.Tag != "!!int" && n.Tag != "!!float" {
			return c.errNode(n, "%s: %q is not a number%s", key, n.Value, unquote(n, "!!int", "!!float"))
		}
		return c.finite(n, key)
	case reflect.Bool:
		if n.Tag != "!!bool" {
			return c.errNode(n, "%s: %q is not true or false", key, n.Value)
		}
	}
	return nil
}

func (c *Config) finite(n *yaml.Node, key string) error {
	var f float64
	if err := n.Decode(&f); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return c.errNode(n, "%s: %s is not a finite number", key, n.Value)
	}
	return nil
}

// deref is the node an alias stands for, or n.
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// yamlFields maps a struct's YAML keys to its fields, and returns its
// inline map field if it has one.
func yamlFields(t reflect.Type) (map[string]reflect.StructField, *reflect.StructField) {
	fields := map[string]reflect.StructField{}
	var inline *reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if !f.IsExported() || tag == "-" || tag == "" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") {
			inline = &f
			continue
		}
		fields[name] = f
	}
	return fields, inline
}

// errNode is an error about node n: at its line in the file, or naming
// the --set that put it there.
func (c *Config) errNode(n *yaml.Node, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if s, ok := c.setBy[n]; ok {
		return fmt.Errorf("%s: --set %s: %s", c.file, s, msg)
	}
	if n.Line > 0 {
		return srcerr.At(c.file, n.Line, "%s", msg)
	}
	return fmt.Errorf("%s: %s", c.file, msg)
}

// find walks path (mapping keys; list indices as ints or digit strings)
// and returns the node an error about it belongs to — the key itself (or
// its value, when a --set gave it), the list element, or the nearest
// parent that exists — and whether the whole path exists.
func (c *Config) find(path ...any) (pos *yaml.Node, found bool) {
	n := c.root
	pos = n
	for _, p := range path {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == fmt.Sprint(p) {
					next, pos = n.Content[i+1], n.Content[i]
					if _, set := c.setBy[next]; set {
						pos = next
					}
				}
			}
		case yaml.SequenceNode:
			k, ok := p.(int)
			if s, isStr := p.(string); isStr {
				var err error
				k, err = strconv.Atoi(s)
				ok = err == nil
			}
			if ok && k >= 0 && k < len(n.Content) {
				next, pos = n.Content[k], n.Content[k]
			}
		}
		if next == nil {
			return pos, false
		}
		n = next
	}
	return pos, true
}

// locate is where an error about the key at path belongs (see find).
func (c *Config) locate(path ...any) *yaml.Node {
	pos, _ := c.find(path...)
	return pos
}

// has reports whether the config gives the key at path.
func (c *Config) has(path ...any) bool {
	_, found := c.find(path...)
	return found
}

// errAt is a validation error about the key at path.
func (c *Config) errAt(msg string, path ...any) error {
	return c.errNode(c.locate(path...), "%s", msg)
}

// ErrAt is an error about the value at the key path (for example
// "embedding", "path"), placed like validation errors: for checks that
// need the data (missing files), made by the runner.
func (c *Config) ErrAt(msg string, path ...any) error { return c.errAt(msg, path...) }

// unquote says "remove the quotes" for a quoted scalar that unquoted would
// have one of the tags wanted ("10" where 10 is meant).
func unquote(n *yaml.Node, tags ...string) string {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		return ""
	}
	var plain yaml.Node
	if yaml.Unmarshal([]byte(n.Value), &plain) != nil || len(plain.Content) != 1 || !slices.Contains(tags, plain.Content[0].Tag) {
		return ""
	}
	return ": remove the quotes (quoted, it is text)"
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
