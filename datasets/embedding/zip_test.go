package embedding

import (
	"archive/zip"
	"bytes"
	"testing"
)

func zipOf(t testing.TB, files map[string]string) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for n, s := range files {
		f, err := w.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(s))
	}
	w.Close()
	return b.Bytes()
}
