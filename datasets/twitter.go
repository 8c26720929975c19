package datasets

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
)

// loadTwitter reads Kaggle's "NLP with Disaster Tweets": train.csv
// (id,keyword,location,text,target) as split train and, when present,
// test.csv (no target) as split unlabelled. path is the folder or the
// train.csv file itself.
func loadTwitter(ctx context.Context, path string, _ Options) (*Dataset, error) {
	dir, train := path, filepath.Join(path, "train.csv")
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir, train = filepath.Dir(path), path
	}
	d := &Dataset{Splits: map[string][]Example{}}
	ex, err := readTweets(ctx, train, true)
	if err != nil {
		return nil, err
	}
	d.Splits["train"] = ex
	test := filepath.Join(dir, "test.csv")
	if _, err := os.Stat(test); err == nil {
		if d.Splits["unlabelled"], err = readTweets(ctx, test, false); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return d, nil
}

// readTweets parses a Kaggle tweets CSV with a real CSV parser: quoted
// fields contain commas, doubled quotes and line breaks.
func readTweets(ctx context.Context, path string, labelled bool) ([]Example, error) {
	rc, name, err := xio.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	r := csv.NewReader(xio.CapLines(xio.SkipBOM(rc), xio.MaxLine))
	r.ReuseRecord = true
	need := []string{"id", "text"}
	if labelled {
		need = append(need, "target")
	}
	col, err := csvHeader(r, name, need, "")
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	var out []Example
	for n := 1; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvErr(name, err)
		}
		if err := checkCtx(ctx, n); err != nil {
			return nil, err
		}
		e := Example{ID: base + ":" + rec[col["id"]], Text: rec[col["text"]], Label: Unlabelled}
		if labelled {
			switch rec[col["target"]] {
			case "0":
				e.Label = 0
			case "1":
				e.Label = 1
			default:
				line, _ := r.FieldPos(col["target"])
				return nil, srcerr.At(name, line, "target %q is not 0 or 1", rec[col["target"]])
			}
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, srcerr.At(name, 0, "no rows after the header")
	}
	return out, nil
}

// csvErr turns encoding/csv's error into a file:line error.
func csvErr(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrQuote) || errors.Is(pe.Err, csv.ErrBareQuote) {
			msg = fmt.Sprintf("%v (the quoted field starts on line %d)", pe.Err, pe.StartLine)
		}
		return srcerr.At(name, pe.Line, "%s", msg)
	}
	var long *xio.LineTooLong
	if errors.As(err, &long) {
		return srcerr.At(name, long.Line, "%v", long)
	}
	return srcerr.Wrap(name, 0, err)
}

// twitterSpec is the twitter corpus (Specs).
var twitterSpec = Spec{Name: "twitter", Title: "NLP with Disaster Tweets (Kaggle)", Labels: []string{"not_disaster", "disaster"},
	Splits: "train.csv (labelled), test.csv as split unlabelled; 10% of train carved as test (9:1)",
	Carve:  []Carving{{"train", "test", 0.1}}, Default: []string{"twitter", "nlp-getting-started"}, load: loadTwitter}
