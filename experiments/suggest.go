package experiments

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/internal/near"
	"github.com/xp-nlp/xp/spec"
)

// suggest is what an unknown key k at path may have meant: a known key of
// its section within two edits ("did you mean epochs?"), or the place the
// key belongs to elsewhere in the config ("lr is a key of model:
// model.lr"). "" when nothing is close.
func suggest(k string, path []string, known []string) string {
	if s := near.DidYouMean(k, known); s != "" {
		return s
	}
	here := strings.Join(path, ".")
	var at []string
	for _, p := range keyPaths()[k] {
		if p != here {
			at = append(at, p)
		}
	}
	if len(at) > 0 {
		return fmt.Sprintf("; %q is a key of %s", k, strings.Join(at, " and of "))
	}
	return ""
}

// keyPaths maps each key a config may hold to the sections that hold it
// ("lr" → "model"): the schema's own keys, and the parameters spec
// describes for models (model), analyses (analysis) and mechanisms
// (mechanisms' params).
func keyPaths() map[string][]string {
	out := map[string][]string{}
	add := func(name, at string) {
		if !slices.Contains(out[name], at) {
			out[name] = append(out[name], at)
		}
	}
	var walk func(t reflect.Type, at string)
	walk = func(t reflect.Type, at string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		fields, _ := yamlFields(t)
		for name, f := range fields {
			if name == "origin" {
				continue
			}
			where := "the config's top level"
			if at != "" {
				where = at
			}
			add(name, where)
			walk(f.Type, strings.TrimPrefix(at+"."+name, "."))
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	for _, k := range []struct {
		kind spec.Kind
		at   string
	}{{spec.Model, "model"}, {spec.Analysis, "analysis"}, {spec.Mechanism, "a mechanism's params"}} {
		for _, d := range spec.All(k.kind) {
			for _, p := range d.Params {
				add(p.Name, k.at)
			}
		}
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}

// TopKeys are the keys a config's top level may hold, in the schema's
// order (origin, which xp writes into a run folder's copy, left out).
func TopKeys() []string {
	var out []string
	t := reflect.TypeOf(Config{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" && name != "origin" {
			out = append(out, name)
		}
	}
	return out
}
