package datasets

import (
	"context"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/xp-nlp/xp/internal/srcerr"
	"github.com/xp-nlp/xp/internal/xio"
)

// loadLexicon reads Hu & Liu's opinion lexicon, positive-words.txt and
// negative-words.txt in dir, as a word-level dataset with one split,
// "all": each example is one opinion word labelled by its polarity.
//
// The files open with a comment header (lines starting with ';') and a
// blank line. They are not all UTF-8: negative-words.txt has one word in
// Latin-1 ("naïve" as 0x6e 0x61 0xef 0x76 0x65). A line that is valid
// UTF-8 is taken as is; any other line is decoded as Latin-1 (ISO-8859-1),
// which maps every byte to the code point of the same value.
func loadLexicon(ctx context.Context, dir string, _ Options) (*Dataset, error) {
	d := &Dataset{Splits: map[string][]Example{}}
	var all []Example
	for label, file := range []string{"negative-words.txt", "positive-words.txt"} {
		words, err := readLexicon(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		for _, w := range words {
			all = append(all, Example{ID: file + ":" + w, Text: w, Label: label})
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	d.Splits["all"] = all
	return d, nil
}

func readLexicon(path string) ([]string, error) {
	rc, name, err := xio.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	lines := xio.NewLines(rc, name)
	var words []string
	for lines.Next() {
		b := lines.Bytes()
		if len(b) == 0 || b[0] == ';' {
			continue
		}
		w := strings.TrimSpace(latin1IfInvalid(b))
		if w == "" {
			continue
		}
		if strings.ContainsAny(w, " \t") {
			return nil, lines.Errorf("%q is not one word", w)
		}
		words = append(words, w)
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, srcerr.At(name, 0, "no words (only comments or %v)", errEmpty)
	}
	return words, nil
}

// latin1IfInvalid returns b as a string, decoding it as Latin-1 when it is
// not valid UTF-8.
func latin1IfInvalid(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// opinionSpec is the opinion corpus (Specs).
var opinionSpec = Spec{Name: "opinion", Title: "Hu & Liu opinion lexicon (product-review opinion words)", Labels: []string{"negative", "positive"}, WordLevel: true,
	Splits: "all (word-level)", Train: "all", Default: []string{"opinion_lexicon", "opinion-lexicon-English"}, load: loadLexicon}
