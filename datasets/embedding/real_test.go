package embedding

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/internal/realdata"
)

func realFile(t testing.TB, rel string) string { return realdata.File(t, rel) }

func TestRealEmbeddings(t *testing.T) {
	cases := []struct {
		rel      string
		n, dim   int
		sha256   string
		format   string
		firstRow string
	}{
		{"embeddings/fasttext-sg-xpcorpus-300d.vec.gz", 44252, 300, "9071e7a7e97de2dd45ab069e91a36fa1f7ff668151e7770bcf72326d50b3617a", "vec", ""},
		{"embeddings/fasttext-sg-xpcorpus-50d.vec.gz", 44252, 50, "4dd878f3abb8d3bd86aadf8a9e4cc6c62e77b2eedc6cfa2dfa89d320b51234f7", "vec", ""},
		{"embeddings/glove.6B.100d.first2604.txt", 2604, 100, "16f94f4d3fd892d9cc90f50f90d01f8be79ccbdf11bcb9aa7cb7614a3b11744e", "glove", "the"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.rel), func(t *testing.T) {
			p := realFile(t, c.rel)
			cache := t.TempDir()
			for _, pass := range []string{"first", "cached"} {
				e, err := Load(context.Background(), p, Options{CacheDir: cache})
				if err != nil {
					t.Fatal(err)
				}
				if e.Len() != c.n || e.Dim != c.dim || e.SourceSHA256 != c.sha256 || e.Format != c.format {
					t.Errorf("%s: %d × %d %s sha256 %s", pass, e.Len(), e.Dim, e.Format, e.SourceSHA256)
				}
				if c.firstRow != "" && e.Words[0] != c.firstRow {
					t.Errorf("first word %q", e.Words[0])
				}
			}
		})
	}
}

// TestRealTokenizerMeetsVectors checks that datasets.DefaultTokenizer
// splits text the way the shared fastText vectors were trained: nearly
// every SST-2 token must have a vector (the vectors keep words seen 5
// times in a corpus that contains SST-2).
func TestRealTokenizerMeetsVectors(t *testing.T) {
	p := realFile(t, "embeddings/fasttext-sg-xpcorpus-50d.vec.gz")
	e, err := Load(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := datasets.Load(context.Background(), datasets.RootFromEnv(), "sst2", datasets.Options{})
	if err != nil {
		t.Skipf("SKIP: %v", err)
	}
	tok := datasets.DefaultTokenizer()
	var n, miss int
	for _, ex := range d.Splits["train"] {
		for _, w := range tok.Tokens(ex.Text) {
			n++
			if _, ok := e.Index(w); !ok {
				miss++
			}
		}
	}
	rate := float64(miss) / float64(n)
	t.Logf("SST-2 train: %d tokens, %d without a vector (%.3f%%)", n, miss, 100*rate)
	if rate > 0.005 {
		t.Errorf("%.2f%% of SST-2 tokens have no vector: tokenizer and vectors disagree", 100*rate)
	}
}

var synth struct {
	once sync.Once
	path string
	err  error
}

// synthetic400k writes a GloVe-6B-sized text file (400,000 × 300, six
// significant digits like GloVe) once per process.
func synthetic400k(b *testing.B) string {
	synth.once.Do(func() {
		dir, err := os.MkdirTemp("", "xp-embbench")
		if err != nil {
			synth.err = err
			return
		}
		synth.path = filepath.Join(dir, "synthetic.400000.300d.txt")
		f, err := os.Create(synth.path)
		if err != nil {
			synth.err = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		r := rand.New(rand.NewPCG(1, 2))
		buf := make([]byte, 0, 64)
		for i := 0; i < 400000; i++ {
			fmt.Fprintf(w, "w%d", i)
			for k := 0; k < 300; k++ {
				buf = strconv.AppendFloat(buf[:0], r.NormFloat64()*0.4, 'f', 6, 32)
				w.WriteByte(' ')
				w.Write(buf)
			}
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			synth.err = err
		}
		f.Close()
	})
	if synth.err != nil {
		b.Fatal(synth.err)
	}
	return synth.path
}

// BenchmarkLoad measures the first (streaming, parsing) load and the
// cached load of the real 300-d vectors and of a synthetic file of GloVe
// 6B's size. MB/s is over the source file's bytes as stored.
//
//	XP_DATA=../shared/data go test ./datasets/embedding -run '^$' -bench Load -benchtime 3x
func BenchmarkLoad(b *testing.B) {
	sources := []struct{ name, path string }{}
	if root := datasets.RootFromEnv(); root != "" {
		p := filepath.Join(root, "embeddings/fasttext-sg-xpcorpus-300d.vec.gz")
		if _, err := os.Stat(p); err == nil {
			sources = append(sources, struct{ name, path string }{"fasttext300d.vec.gz", p})
		}
	} else {
		b.Log("SKIP real file: XP_DATA not set")
	}
	sources = append(sources, struct{ name, path string }{"synthetic400kx300.txt", ""})
	for _, s := range sources {
		for _, mode := range []string{"first", "cached"} {
			b.Run(s.name+"/"+mode, func(b *testing.B) {
				path := s.path
				if path == "" {
					path = synthetic400k(b)
				}
				st, _ := os.Stat(path)
				cache := b.TempDir()
				if mode == "cached" {
					if _, err := Load(context.Background(), path, Options{CacheDir: cache}); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(st.Size())
				b.ResetTimer()
				var n int
				for i := 0; i < b.N; i++ {
					// Collect the previous iteration's matrix outside the
					// timer: each op is measured as a process's first load.
					b.StopTimer()
					runtime.GC()
					b.StartTimer()
					opt := Options{}
					if mode == "cached" {
						opt.CacheDir = cache
					}
					e, err := Load(context.Background(), path, opt)
					if err != nil {
						b.Fatal(err)
					}
					n = e.Len()
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
			})
		}
	}
}
