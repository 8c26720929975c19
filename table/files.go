package table

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xp-nlp/xp/internal/xio"
	"github.com/xp-nlp/xp/results"
)

// WriteTables writes, under dir/tables (atomically), the summary as
// results.csv, results.md and results.tex (LaTeX, booktabs), and the
// long per-seed table cells.csv; it returns their paths.
func WriteTables(dir string, rows []results.Row, recs []results.Record, opt results.TableOptions) ([]string, error) {
	td := filepath.Join(dir, "tables")
	if err := os.MkdirAll(td, 0o777); err != nil {
		return nil, err
	}
	var sum, cells strings.Builder
	if err := WriteCSV(&sum, rows); err != nil {
		return nil, fmt.Errorf("table: csv: %w", err)
	}
	if err := WriteCells(&cells, recs, opt); err != nil {
		return nil, fmt.Errorf("table: cells csv: %w", err)
	}
	files := []struct{ name, data string }{{"results.csv", sum.String()}, {"results.md", Markdown(rows)}, {"results.tex", LaTeX(rows)}, {"cells.csv", cells.String()}}
	if opt.Select { // every point of the model sweep beside the lines chosen
		all := opt
		all.Select = false
		sweep := results.Table(recs, all)
		files = append(files, struct{ name, data string }{"sweep.md", Markdown(sweep)}, struct{ name, data string }{"sweep.tex", LaTeX(sweep)})
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(td, f.name)
		if err := xio.WriteFileAtomic(p, []byte(f.data)); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
