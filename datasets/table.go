package datasets

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/xp-nlp/xp/internal/jsondup"
	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
)

// TableOptions name where a user's table (dataset "table") keeps its
// fields, and its test file.
type TableOptions struct {
	// Text, Text2 and Label are the column names (CSV, TSV: the header
	// row) or keys (JSONL) of the text, the optional second text of a
	// sentence pair, and the label; Text defaults to "text", Label to
	// "label".
	Text, Text2, Label string
	// TestPath is the test file, in the same format; empty: the dataset
	// has a train split only (carve a test split from it).
	TestPath string
}

func (o TableOptions) columns() (text, text2, label string) {
	text, label = o.Text, o.Label
	if text == "" {
		text = "text"
	}
	if label == "" {
		label = "label"
	}
	return text, o.Text2, label
}

// row is one example as read, before labels are indexed.
type row struct {
	id, text, text2, label string
}

// loadTable reads a user's table: path (split train) and, when given,
// opt.Table.TestPath (split test), each a CSV (.csv), TSV (.tsv) or
// JSONL (.jsonl) file, plain or .gz. Labels are the label column's
// distinct values in sorted order, the same for both files (checked:
// labelUse.labels), or opt.Labels where given; an example's ID is
// file:line. A missing column or an empty text or label is an
// error at its file and line.
func loadTable(ctx context.Context, path string, opt Options) (*Dataset, error) {
	files := map[string]string{"train": path}
	if opt.Table.TestPath != "" {
		files["test"] = opt.Table.TestPath
	}
	rows := map[string][]row{}
	use := newLabelUse("train")
	if opt.Table.TestPath != "" {
		use = newLabelUse("train", "test")
	}
	for _, split := range use.splits {
		rs, err := readTable(ctx, files[split], opt.Table)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			use.add(split, r.label, r.id)
		}
		rows[split] = rs
	}
	source := path
	if opt.Table.TestPath != "" {
		source += " and " + opt.Table.TestPath
	}
	labels, err := use.labels(source, opt.Labels)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Labels: labels, Splits: map[string][]Example{}, Pair: opt.Table.Text2 != ""}
	for split, rs := range rows {
		for _, r := range rs {
			d.Splits[split] = append(d.Splits[split], Example{ID: r.id, Text: r.text, Text2: r.text2, Label: slices.Index(labels, r.label)})
		}
	}
	return d, nil
}

// readTable reads one file of a table in the format its name says.
// invalidAt is the 1-based position of the first byte of s that is not
// UTF-8.
func invalidAt(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i + 1
			}
		}
	}
	return 0
}

func readTable(ctx context.Context, path string, opt TableOptions) ([]row, error) {
	rc, name, err := xio.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	file := path
	if _, member := xio.SplitMember(path); member != "" {
		file = member // a zip's member names the format
	}
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(file)), ".gz")
	text, text2, label := opt.columns()
	id := filepath.Base(path)
	var out []row
	add := func(line int, fields func(string) (string, bool)) error {
		r := row{id: fmt.Sprintf("%s:%d", id, line)}
		for _, f := range []struct {
			col string
			dst *string
		}{{text, &r.text}, {text2, &r.text2}, {label, &r.label}} {
			if f.col == "" {
				continue
			}
			v, ok := fields(f.col)
			switch {
			case !ok:
				return srcerr.At(name, line, "no %q field", f.col)
			case strings.TrimSpace(v) == "":
				return srcerr.At(name, line, "empty %q", f.col)
			case !utf8.ValidString(v):
				return srcerr.At(name, line, "%q is not UTF-8 text (byte %d); convert the file to UTF-8", f.col, invalidAt(v))
			case strings.IndexByte(v, 0) >= 0:
				return srcerr.At(name, line, "%q holds a NUL byte (at %d): a binary file, or text damaged on the way", f.col, strings.IndexByte(v, 0)+1)
			}
			*f.dst = v
		}
		r.label = strings.TrimSpace(r.label)
		out = append(out, r)
		return checkCtx(ctx, len(out))
	}
	switch {
	case strings.HasSuffix(base, ".jsonl") || strings.HasSuffix(base, ".ndjson"):
		lines := xio.NewLines(xio.SkipBOM(rc), name)
		for lines.Next() {
			if strings.TrimSpace(lines.Text()) == "" {
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(lines.Bytes(), &obj); err != nil {
				return nil, lines.Errorf("not a JSON object: %v", err)
			}
			if name, dup, _ := jsondup.First(lines.Bytes()); dup {
				return nil, lines.Errorf("%q is given twice: which one is meant is not clear", name)
			}
			err := add(lines.N(), func(k string) (string, bool) {
				v, ok := obj[k]
				switch v := v.(type) {
				case string:
					return v, ok
				case float64, bool:
					return fmt.Sprint(v), ok // numeric or boolean labels
				}
				return "", false
			})
			if err != nil {
				return nil, err
			}
		}
		if err := lines.Err(); err != nil {
			return nil, err
		}
	case strings.HasSuffix(base, ".csv") || strings.HasSuffix(base, ".tsv"):
		r := csv.NewReader(xio.CapLines(xio.SkipBOM(rc), xio.MaxLine))
		if strings.HasSuffix(base, ".tsv") {
			r.Comma, r.LazyQuotes = '\t', true
		}
		col, err := csvHeader(r, name, []string{text, text2, label}, " (set dataset.text, text2, label to the column names)")
		if err != nil {
			return nil, err
		}
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, csvErr(name, err)
			}
			line, _ := r.FieldPos(0)
			if err := add(line, func(k string) (string, bool) { return rec[col[k]], true }); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%s: want a .csv, .tsv or .jsonl file (optionally .gz)", name)
	}
	if len(out) == 0 {
		return nil, srcerr.At(name, 0, "%w: no examples", errEmpty)
	}
	return out, nil
}

// tableSpec is the table corpus (Specs).
var tableSpec = Spec{Name: "table", Own: true, Columns: true, Title: "your own data: a CSV, TSV or JSONL file with text (and text2) and label columns",
	Splits: "train (dataset.path) and test (dataset.test_path), or a test split carved by test_fraction", load: loadTable}
