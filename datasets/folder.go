package datasets

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xp-nlp/xp/internal/xio"
)

// loadFolder reads the generic layout: one folder per class, one text per
// file. Either dir/<class>/<file> (one split, "all") or
// dir/<split>/<class>/<file> when dir holds a "train" folder. Label names
// are the class folder names in alphabetical order, the same for every
// split. Hidden files are skipped; texts that are not UTF-8 are read as
// Latin-1.
func loadFolder(ctx context.Context, dir string, _ Options) (*Dataset, error) {
	splits := map[string]string{"all": dir}
	if st, err := os.Stat(filepath.Join(dir, "train")); err == nil && st.IsDir() {
		splits = map[string]string{}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				splits[e.Name()] = filepath.Join(dir, e.Name())
			}
		}
	}
	classes := map[string]bool{}
	for _, sdir := range splits {
		entries, err := os.ReadDir(sdir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				classes[e.Name()] = true
			}
		}
	}
	labels := sortedKeys(classes)
	if len(labels) < 2 {
		return nil, fmt.Errorf("%s: %d class folders; need at least 2", dir, len(labels))
	}
	d := &Dataset{Labels: labels, Splits: map[string][]Example{}}
	for split, sdir := range splits {
		for li, class := range labels {
			cdir := filepath.Join(sdir, class)
			entries, err := os.ReadDir(cdir)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				b, err := xio.ReadFileMax(filepath.Join(cdir, e.Name()), xio.MaxText)
				if err != nil {
					return nil, err
				}
				id, _ := filepath.Rel(dir, filepath.Join(cdir, e.Name()))
				d.Splits[split] = append(d.Splits[split], Example{ID: filepath.ToSlash(id), Text: latin1IfInvalid(b), Label: li})
			}
		}
		sortByID(d.Splits[split])
	}
	return d, nil
}
