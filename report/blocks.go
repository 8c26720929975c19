package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/xp-nlp/xp/claims"
	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/rundir"
	"github.com/xp-nlp/xp/table"
)

// Blocks say how a Markdown document's generated blocks are filled
// (FillBlocks).
type Blocks struct {
	// Claims is the claims file the document is generated from, decided
	// (Agreements), at ClaimsPath: its runs label the results blocks, and
	// the document's runs and agreement blocks must name it. Nil: the
	// document has no runs block, and an agreement block reads the claims
	// file it names.
	Claims     *claims.File
	ClaimsPath string
	Agreements []claims.Agreement
	// Page is the page written beside the document (its file name), to
	// which a results block links a table too long to show (paperRows);
	// "": every table in full.
	Page string
	// Warn receives what is wrong with a run whose tables a block shows
	// (damaged or stale records, a partial run: Incomplete); may be nil.
	Warn io.Writer
}

// FillBlocks regenerates every generated block of a Markdown document —
// the one generator of them, for `xp results --into` and `make
// paper-tables` alike — and returns the document, the number of blocks
// and the problems of those left as they were:
//
//   - "<!-- xp:results DIR -->": the run folder's tables (a partial run
//     says how partial; a claims file's run without records says so, any
//     other is a problem);
//   - "<!-- xp:agreement FILE -->": a claims file's verdict tables;
//   - "<!-- xp:runs FILE -->": the claims file's runs (b.Claims only).
func FillBlocks(doc []byte, b Blocks) ([]byte, int, []error) {
	return table.Splice(doc, map[string]func(string) (string, error){
		"results": func(dir string) (string, error) {
			if _, err := os.Stat(filepath.Join(dir, rundir.PlanName)); errors.Is(err, fs.ErrNotExist) && b.Claims != nil {
				return fmt.Sprintf("Not run here: no records in %s (`make paper` runs what is missing).\n", dir), nil
			}
			st, rows, stats, err := rundir.ReadTables(dir)
			if err != nil {
				return "", err
			}
			if b.Warn != nil {
				Incomplete(b.Warn, st)
			}
			var t string
			if b.Page == "" {
				t = Tables(rows, stats)
			} else {
				label := filepath.Base(dir) // the run the page labels with the claims file's name for it
				if b.Claims != nil {
					for _, r := range b.Claims.Runs {
						if xio.SamePath(b.Claims.Dir(r.Name), dir) {
							label = r.Name
						}
					}
				}
				t = paperTables(rows, stats, filepath.ToSlash(dir), b.Page+"#"+RunID(0, &Run{Label: label}))
			}
			if st.Failed+st.Missing > 0 {
				t = fmt.Sprintf("Partial run: %d of %d cells have a record (%d failed, %d missing); the tables below read those.\n\n", st.Ok, len(st.Cells), st.Failed, st.Missing) + t
			}
			return t, nil
		},
		"runs": func(path string) (string, error) {
			if b.Claims == nil {
				return "", errors.New("a runs block is written by make paper-tables from its claims file, with the page beside the document")
			}
			if !xio.SamePath(path, b.ClaimsPath) {
				return "", fmt.Errorf("block names %s, the documents are generated from %s", path, b.ClaimsPath)
			}
			g, err := runsGrid(b.Claims)
			if err != nil {
				return "", err
			}
			return g.Markdown(), nil
		},
		"agreement": func(path string) (string, error) {
			if b.Claims != nil {
				if !xio.SamePath(path, b.ClaimsPath) {
					return "", fmt.Errorf("block names %s, the documents are generated from %s", path, b.ClaimsPath)
				}
				return claims.Markdown(b.Agreements), nil
			}
			f, err := claims.Read(path)
			if err != nil {
				return "", err
			}
			as, err := f.Decide()
			if err != nil {
				return "", err
			}
			return claims.Markdown(as), nil
		},
	})
}
