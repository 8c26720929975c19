package catalog

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/xp-nlp/xp/datasets"
)

// Status is the state of one file of an artifact under a data root.
type Status struct {
	Artifact Artifact
	File     File
	Path     string // where it was found; "" when absent
	Size     int64  // bytes (a folder: the sum of its files)
	SHA256   string // of the file as stored; "" for folders or when not hashed
	Check    string // verified, MISMATCH, no published checksum, extracted layout, absent
}

// List reports every catalog file under root. With hash set it computes
// sha256 (and verifies published checksums), which reads every file.
func List(root string, hash bool) []Status {
	var out []Status
	for _, a := range All() {
		files := a.Files
		for _, f := range files {
			s := Status{Artifact: a, File: f, Check: "absent"}
			p := f.Local(root)
			if st, err := os.Stat(p); root != "" && err == nil && !st.IsDir() {
				s.Path, s.Size, s.Check = p, st.Size(), "not checked"
				if hash {
					s.SHA256, _ = SHA256(p)
					switch err := Verify(p, f.Sum); {
					case f.Sum == "":
						s.Check = "no published checksum"
					case err != nil:
						s.Check = "MISMATCH: " + err.Error()
					default:
						s.Check = "verified"
					}
				}
			} else if a.Dataset != "" && root != "" {
				if loc, err := datasets.Locate(root, a.Dataset, datasets.Options{}); err == nil {
					s.Path, s.Size, s.Check = loc, treeSize(loc), "extracted layout (the loader reads it)"
					if hash {
						if st, err := os.Stat(loc); err == nil && !st.IsDir() {
							s.SHA256, _ = SHA256(loc)
						}
					}
				}
			}
			out = append(out, s)
			if s.Check == "extracted layout (the loader reads it)" {
				break // one row stands for the whole dataset
			}
		}
	}
	return out
}

// treeSize is the bytes of the regular files under p. The loader reads
// through links, so the size does too: a dataset folder linked into the
// data root, and linked files inside it, count what they point at (a
// linked folder inside is not descended into, which keeps a cycle of
// links from walking forever).
func treeSize(p string) int64 {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	var n int64
	filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			info, err = os.Stat(path)
		}
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}
