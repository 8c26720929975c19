package datasets

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/xp-nlp/xp/internal/xio"
)

// loadFolder reads the generic layout: one folder per class, one text per
// file. Either dir/<class>/<file> (one split, "all") or
// dir/<split>/<class>/<file> when dir holds a "train" folder. Label names
// are the class folder names in alphabetical order, the same for every
// split (checked: labelUse.labels), or opt.Labels where given. Hidden
// files are skipped; texts that are not UTF-8 are read as Latin-1.
func loadFolder(ctx context.Context, dir string, opt Options) (*Dataset, error) {
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
	use := newLabelUse(sortedKeys(splits)...)
	files := map[string]map[string][]string{} // split → class → files
	for _, split := range use.splits {
		entries, err := os.ReadDir(splits[split])
		if err != nil {
			return nil, err
		}
		files[split] = map[string][]string{}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			cdir := filepath.Join(splits[split], e.Name())
			texts, err := os.ReadDir(cdir)
			if err != nil {
				return nil, err
			}
			for _, f := range texts {
				if f.IsDir() || strings.HasPrefix(f.Name(), ".") {
					continue
				}
				files[split][e.Name()] = append(files[split][e.Name()], f.Name())
				id, _ := filepath.Rel(dir, filepath.Join(cdir, f.Name()))
				use.add(split, e.Name(), filepath.ToSlash(id))
			}
		}
	}
	labels, err := use.labels(dir, opt.Labels)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Labels: labels, Splits: map[string][]Example{}}
	for split, sdir := range splits {
		for li, class := range labels {
			cdir := filepath.Join(sdir, class)
			for _, name := range files[split][class] {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				b, err := xio.ReadFileMax(filepath.Join(cdir, name), xio.MaxText)
				if err != nil {
					return nil, err
				}
				id, _ := filepath.Rel(dir, filepath.Join(cdir, name))
				d.Splits[split] = append(d.Splits[split], Example{ID: filepath.ToSlash(id), Text: latin1IfInvalid(b), Label: li})
			}
		}
		sortByID(d.Splits[split])
	}
	return d, nil
}

// folderSpec is the folder corpus (Specs).
var folderSpec = Spec{Name: "folder", Own: true, Title: "one folder per class, one text per file (optionally under train/ and test/)",
	Splits: "the folder's train/test/... subfolders, or all", load: loadFolder}
