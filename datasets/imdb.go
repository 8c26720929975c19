package datasets

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
)

// loadIMDb reads the aclImdb tree, in place from its folder or straight
// from the .tar.gz (never extracted): {train,test}/{pos,neg}/<id>_<rating>.txt.
// The unlabelled train/unsup reviews are skipped. HTML line breaks are
// replaced by a space. Examples are in path order, so the result does not
// depend on the order of the archive's members.
func loadIMDb(ctx context.Context, path string, _ Options) (*Dataset, error) {
	d := &Dataset{Splits: map[string][]Example{}}
	add := func(name string, body []byte) error {
		e, split, ok, err := imdbExample(name, body)
		if err != nil || !ok {
			return err
		}
		d.Splits[split] = append(d.Splits[split], e)
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		err = filepath.WalkDir(path, func(p string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() || !strings.HasSuffix(p, ".txt") {
				return err
			}
			if err := checkCtx(ctx, len(d.Splits["train"])+len(d.Splits["test"])); err != nil {
				return err
			}
			rel, _ := filepath.Rel(path, p)
			if !isReview(filepath.ToSlash(rel)) {
				return nil
			}
			b, err := xio.ReadFileMax(p, xio.MaxText)
			if err != nil {
				return err
			}
			return add(p, b)
		})
	} else {
		err = readTarGz(ctx, path, func(name string, r io.Reader) error {
			if !isReview(name) {
				return nil
			}
			b, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			return add(path+"#"+name, b)
		})
	}
	if err != nil {
		return nil, err
	}
	if len(d.Splits) == 0 {
		return nil, fmt.Errorf("%s: no reviews under {train,test}/{pos,neg}/", path)
	}
	for s, ex := range d.Splits {
		sortByID(ex)
		d.Splits[s] = ex
	}
	return d, nil
}

// isReview reports whether a path inside the tree is a labelled review.
func isReview(p string) bool {
	return strings.HasSuffix(p, ".txt") && (strings.Contains(p, "/pos/") || strings.Contains(p, "/neg/") ||
		strings.HasPrefix(p, "pos/") || strings.HasPrefix(p, "neg/"))
}

// imdbExample parses ".../{train,test}/{pos,neg}/<id>_<rating>.txt".
func imdbExample(name string, body []byte) (e Example, split string, ok bool, err error) {
	parts := strings.Split(filepath.ToSlash(name), "/")
	if len(parts) < 3 {
		return e, "", false, nil
	}
	file, pol, split := parts[len(parts)-1], parts[len(parts)-2], parts[len(parts)-3]
	if split != "train" && split != "test" {
		return e, "", false, nil
	}
	e.Label = 0
	if pol == "pos" {
		e.Label = 1
	}
	id, rating, found := strings.Cut(strings.TrimSuffix(file, ".txt"), "_")
	r, rerr := strconv.Atoi(rating)
	if !found || rerr != nil || r < 1 || r > 10 {
		return e, "", false, srcerr.At(name, 0, "file name is not <id>_<rating>.txt")
	}
	if !utf8.Valid(body) {
		return e, "", false, srcerr.At(name, 0, "review is not valid UTF-8")
	}
	e.ID = split + "/" + pol + "/" + id + "_" + rating
	e.Rating = r
	e.Text = stripBreaks(string(body))
	return e, split, true, nil
}

var breaks = strings.NewReplacer("<br />", " ", "<br/>", " ", "<br>", " ")

func stripBreaks(s string) string { return strings.TrimSpace(breaks.Replace(s)) }

// readTarGz calls fn for every regular file of a .tar.gz (or .tar) archive.
// A truncated archive is an error naming the archive and the member.
func readTarGz(ctx context.Context, path string, fn func(name string, r io.Reader) error) error {
	rc, name, err := xio.Open(path)
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	last := ""
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return srcerr.At(name, 0, "after member %q: %w", last, err)
		}
		if err := checkCtx(ctx, n); err != nil {
			return err
		}
		last = h.Name
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := fn(h.Name, tr); err != nil {
			return srcerr.Wrap(name+"#"+h.Name, 0, err)
		}
	}
}

// imdbSpec is the imdb corpus (Specs).
var imdbSpec = Spec{Name: "imdb", Title: "IMDb Large Movie Review Dataset (Maas et al. 2011)", Labels: sentiment,
	Splits:  "train 25,000 / test 25,000",
	Default: []string{"imdb/aclImdb", "imdb/aclImdb_v1.tar.gz", "imdb/aclImdb_v1_train_test.tar.gz", "aclImdb", "aclImdb_v1.tar.gz"},
	load:    loadIMDb}
