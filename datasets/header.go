package datasets

import (
	"encoding/csv"
	"io"
	"strings"

	"github.com/xp-nlp/xp/internal/srcerr"
)

// columns indexes a header row by column name (spaces and a byte-order
// mark trimmed) and checks that it names each column of need ("" is
// skipped); the error names the file's first line, the header and the
// first column missing, with hint after it.
func columns(name string, header, need []string, hint string) (map[string]int, error) {
	col := make(map[string]int, len(header))
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range need {
		if _, ok := col[c]; c != "" && !ok {
			return nil, srcerr.At(name, 1, "header %q has no %q column%s", header, c, hint)
		}
	}
	return col, nil
}

// csvHeader reads the header row of a CSV or TSV file and indexes it
// (columns): an empty file is errEmpty, a malformed row a ParseError
// turned into one line naming the file and line.
func csvHeader(r *csv.Reader, name string, need []string, hint string) (map[string]int, error) {
	header, err := r.Read()
	if err == io.EOF {
		return nil, srcerr.At(name, 0, "%w: no header row", errEmpty)
	}
	if err != nil {
		return nil, csvErr(name, err)
	}
	return columns(name, header, need, hint)
}
