package datasets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
)

// GLUE TSV files have a header row and tab-separated columns with no
// quoting (Python reads them with quoting=QUOTE_NONE): a quote character
// is text. Test files have no label column; their examples are Unlabelled.

func loadSST2(ctx context.Context, dir string, _ Options) (*Dataset, error) {
	return loadGLUE(ctx, dir, sentiment, []string{"sentence"}, func(s string) (int, error) {
		switch s {
		case "0":
			return 0, nil
		case "1":
			return 1, nil
		}
		return 0, fmt.Errorf("label %q is not 0 or 1", s)
	})
}

func loadQNLI(ctx context.Context, dir string, _ Options) (*Dataset, error) {
	labels := []string{"entailment", "not_entailment"}
	return loadGLUE(ctx, dir, labels, []string{"question", "sentence"}, func(s string) (int, error) {
		return labelIndex(labels, s)
	})
}

// loadGLUE reads train.tsv, dev.tsv and test.tsv (whichever exist; at
// least one must) from dir.
func loadGLUE(ctx context.Context, dir string, labels, textCols []string, label func(string) (int, error)) (*Dataset, error) {
	d := &Dataset{Labels: labels, Splits: map[string][]Example{}}
	for _, split := range []string{"train", "dev", "test"} {
		path := filepath.Join(dir, split+".tsv")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		ex, err := readTSV(ctx, path, textCols, label)
		if err != nil {
			return nil, err
		}
		d.Splits[split] = ex
	}
	if len(d.Splits) == 0 {
		return nil, fmt.Errorf("%s: no train.tsv, dev.tsv or test.tsv", dir)
	}
	return d, nil
}

// readTSV reads one GLUE TSV file. textCols name the text column(s); a
// "label" column is optional (absent in test files), an "index" column is
// used for IDs when present.
func readTSV(ctx context.Context, path string, textCols []string, label func(string) (int, error)) ([]Example, error) {
	rc, name, err := xio.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	lines := xio.NewLines(rc, name)
	if !lines.Next() {
		if err := lines.Err(); err != nil {
			return nil, err
		}
		return nil, srcerr.At(name, 0, "%w: no header row", errEmpty)
	}
	header := strings.Split(lines.Text(), "\t")
	col, err := columns(name, header, textCols, "")
	if err != nil {
		return nil, err
	}
	var text []int
	for _, c := range textCols {
		text = append(text, col[c])
	}
	labelCol, labelled := col["label"]
	indexCol, indexed := col["index"]
	base := filepath.Base(path)
	var out []Example
	for lines.Next() {
		if err := checkCtx(ctx, lines.N()); err != nil {
			return nil, err
		}
		row := strings.Split(lines.Text(), "\t")
		if len(row) != len(header) {
			return nil, lines.Errorf("row has %d columns, header has %d (%s)", len(row), len(header), strings.Join(header, ", "))
		}
		e := Example{ID: base + ":" + strconv.Itoa(lines.N()), Label: Unlabelled}
		if indexed {
			e.ID = base + ":" + row[indexCol]
		}
		e.Text = strings.TrimSpace(row[text[0]])
		if len(text) > 1 {
			e.Text2 = strings.TrimSpace(row[text[1]])
		}
		if labelled {
			if e.Label, err = label(strings.TrimSpace(row[labelCol])); err != nil {
				return nil, lines.Errorf("%w", err)
			}
		}
		out = append(out, e)
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// sst2Spec is the sst2 corpus (Specs).
var sst2Spec = Spec{Name: "sst2", Title: "GLUE SST-2", Labels: sentiment,
	Splits: "train / dev / test (unlabelled)", Test: "dev", Default: []string{"sst2", "SST-2"}, load: loadSST2}

// qnliSpec is the qnli corpus (Specs).
var qnliSpec = Spec{Name: "qnli", Title: "GLUE QNLI", Labels: []string{"entailment", "not_entailment"}, Pair: true,
	Splits: "train / dev / test (unlabelled)", Test: "dev", Default: []string{"qnli", "QNLI"}, load: loadQNLI}
