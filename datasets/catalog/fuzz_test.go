package catalog

import (
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzUnpack: whatever a zip archive holds — member names with "..",
// absolute paths, the completion marker's name, links, more bytes or
// files than allowed — unpacking it never panics, writes nothing outside
// the artifact's folder, leaves no temporary file, and marks the
// extraction finished only when it returned no error.
func FuzzUnpack(f *testing.F) {
	build := func(files ...string) []byte {
		var b bytes.Buffer
		w := zip.NewWriter(&b)
		for i := 0; i+1 < len(files); i += 2 {
			fw, _ := w.Create(files[i])
			fw.Write([]byte(files[i+1]))
		}
		w.Close()
		return b.Bytes()
	}
	f.Add(build("SST-2/train.tsv", "sentence\tlabel\nfine\t1\n"))
	f.Add(build("SST-2/../../evil.txt", "x"))
	f.Add(build("/abs/evil.txt", "x"))
	f.Add(build("SST-2/.xp-unpacked-SST-2.zip", "x"))
	f.Add(build("SST-2/a", strings.Repeat("\x00", 5000), "SST-2/b", "y"))
	f.Add([]byte("not a zip"))
	f.Fuzz(func(t *testing.T, archive []byte) {
		base := t.TempDir()
		root := filepath.Join(base, "root")
		a, _ := Find("sst2")
		path := a.Files[0].Local(root)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, archive, 0o644); err != nil {
			t.Fatal(err)
		}
		err := unpack(context.Background(), a, root, FetchOptions{MaxUnpacked: 4096, MaxMembers: 3})
		dir := filepath.Join(root, filepath.FromSlash(a.Dir))
		marked := false
		filepath.WalkDir(base, func(p string, d fs.DirEntry, werr error) error {
			if werr != nil || d.IsDir() || p == path {
				return nil
			}
			if rel, rerr := filepath.Rel(dir, p); rerr != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s written outside %s", p, dir)
			}
			if strings.HasSuffix(p, ".tmp") {
				t.Errorf("%s left behind", p)
			}
			if strings.HasPrefix(d.Name(), ".xp-unpacked-") {
				marked = true
			}
			return nil
		})
		if marked && err != nil {
			t.Errorf("marked finished after %v", err)
		}
	})
}
