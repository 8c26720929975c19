package experiments

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/xp-nlp/xp/internal/yamldoc"
)

// set applies one "a.b.c=value" override to the document, creating
// mappings as needed; list elements are addressed by index
// (mechanisms.0.epsilon). The nodes it adds are remembered, so that an
// error about them names the --set rather than a line of the file.
func (c *Config) set(s string) error {
	key, value, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return errors.New("want path.to.key=value")
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return fmt.Errorf("value: %w", err)
	}
	if err := yamldoc.Bounded("value", &v); err != nil {
		return err
	}
	var val *yaml.Node
	if v.Kind == 0 {
		val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	} else {
		val = v.Content[0]
	}
	c.mark(val, s)
	n := c.root
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
				k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}
				c.mark(k, s)
				c.mark(child, s)
				n.Content = append(n.Content, k, child)
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

// mark records that n and its descendants come from the override s.
func (c *Config) mark(n *yaml.Node, s string) {
	c.setBy[n] = s
	for _, ch := range n.Content {
		c.mark(ch, s)
	}
}
