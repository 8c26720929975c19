// Package jsondup finds a name given twice in one JSON object, at any
// depth: encoding/json keeps the last of them without a word, so a
// checkpoint's header, config.json or tokenizer.json, or a row of a
// user's JSONL table that names a field twice would be read as whichever
// came last. Every reader of such a file asks First before decoding.
package jsondup

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// First returns the first name that occurs twice in one object of the
// JSON text data, as a path from the top ("model.vocab.hello"; a name
// at the top is itself), and whether there is one. Text that is not
// JSON returns its syntax error (the caller's decoder would give the same).
func First(data []byte) (string, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		names  map[string]bool
		key    string // the name whose value is being read (objects)
		expect bool   // the next token is a name
	}
	var stack []*frame
	path := func(name string) string {
		var parts []string
		for _, f := range stack[:len(stack)-1] {
			if f.object {
				parts = append(parts, f.key)
			}
		}
		return strings.Join(append(parts, name), ".")
	}
	// valueDone marks, after a whole value, that the object holding it
	// expects a name next.
	valueDone := func() {
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expect = true
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) && len(stack) > 0 {
			return "", false, io.ErrUnexpectedEOF
		} else if errors.Is(err, io.EOF) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expect {
			top := stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			name, _ := tok.(string)
			if top.names[name] {
				return path(name), true, nil
			}
			top.names[name], top.key, top.expect = true, name, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, names: map[string]bool{}, expect: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
