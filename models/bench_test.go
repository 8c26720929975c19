package models

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/torchrt"
)

// BenchmarkTrainVsPyTorch trains the same biLSTM (frozen 300-d
// embeddings, 1×128 bidirectional LSTM, dropout 0.5, Adam, clipping 5,
// batch 64) for one epoch on the same token ids with xp and with
// bench/pytorch_bilstm.py (Debian's python3-torch: the same libtorch), one
// after the other in one run, and reports both rates and their ratio.
// Short sentences (SST-2, cut to 64 tokens) and long reviews (IMDb, cut
// to 256). XP_THREADS sets the intra-op threads of both (default: all
// cores). Needs XP_DATA and python3 with torch (scripts/setup.sh pytorch):
//
//	make bench-pytorch
func BenchmarkTrainVsPyTorch(b *testing.B) {
	root := datasets.RootFromEnv()
	if root == "" {
		b.Skip("SKIP: XP_DATA not set")
	}
	python := torchPython()
	if python == "" {
		b.Skip("SKIP: no python3 with torch (XP_PYTHON, python3, /usr/bin/python3 tried; scripts/setup.sh pytorch installs Debian's python3-torch)")
	}
	threads := runtime.NumCPU()
	if v, err := strconv.Atoi(os.Getenv("XP_THREADS")); err == nil && v > 0 {
		threads = v
	}
	for _, c := range []struct {
		dataset string
		n       int
		maxLen  int
	}{
		{"sst2", 8000, 64},
		{"imdb", 384, 256},
	} {
		b.Run(c.dataset, func(b *testing.B) {
			r := loadReal(b, root, c.dataset, nil, "train")
			train := sample(r.data["train"], c.n)
			valid := sample(r.data["train"], 64)
			file := filepath.Join(b.TempDir(), "ids.tsv")
			if err := writeIDs(file, train); err != nil {
				b.Fatal(err)
			}
			if err := torchrt.SetThreads(threads); err != nil {
				b.Fatal(err)
			}
			var xp, pt float64
			for i := 0; i < b.N; i++ {
				var res TrainResult
				err := torchrt.Do(func() error {
					torchrt.ManualSeed(1)
					m, err := NewBiLSTM(BiLSTMConfig{Vocab: int64(r.vocab.Len()), EmbedDim: int64(r.emb.Dim), Hidden: 128, Layers: 1, Classes: 2,
						Dropout: 0.5, LR: 1e-3, ClipNorm: 5, Pretrained: r.pre, Freeze: true}, gotch.CPU)
					if err != nil {
						return err
					}
					defer m.Close()
					res, err = Train(context.Background(), m, train, valid, TrainOptions{Epochs: 1, Batch: 64, MaxLen: c.maxLen, Classes: 2, Seed: 1, Device: gotch.CPU, Dir: b.TempDir()})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				xp += res.Epochs[0].ExamplesPerSec
				cmd := exec.Command(python, "../bench/pytorch_bilstm.py", "--data", file, "--vocab", strconv.Itoa(r.vocab.Len()),
					"--dim", strconv.Itoa(r.emb.Dim), "--maxlen", strconv.Itoa(c.maxLen), "--threads", strconv.Itoa(threads))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("pytorch: %v: %s", err, stderr.String())
				}
				var got struct {
					ExamplesPerSec float64 `json:"examples_per_sec"`
					Threads        int     `json:"threads"`
					Torch          string  `json:"torch"`
				}
				if err := json.Unmarshal(out, &got); err != nil {
					b.Fatalf("pytorch output %q: %v", out, err)
				}
				pt += got.ExamplesPerSec
				b.Logf("%s: %d examples, max length %d, %d threads: xp %.1f examples/s, PyTorch %s %.1f examples/s (%d threads)",
					c.dataset, len(train.Seqs), c.maxLen, threads, res.Epochs[0].ExamplesPerSec, got.Torch, got.ExamplesPerSec, got.Threads)
			}
			b.ReportMetric(xp/float64(b.N), "xp-ex/s")
			b.ReportMetric(pt/float64(b.N), "torch-ex/s")
			b.ReportMetric(xp/pt, "xp/torch")
		})
	}
}

// torchPython is the first of $XP_PYTHON, python3 on PATH and Debian's
// /usr/bin/python3 that imports torch ("" if none does).
func torchPython() string {
	for _, p := range []string{os.Getenv("XP_PYTHON"), "python3", "/usr/bin/python3"} {
		if p != "" && exec.Command(p, "-c", "import torch").Run() == nil {
			return p
		}
	}
	return ""
}

// sample takes n examples spread evenly over d (both classes of a
// class-sorted split).
func sample(d Data, n int) Data {
	var out Data
	step := max(1, len(d.Seqs)/n)
	for i := 0; i < len(d.Seqs) && len(out.Seqs) < n; i += step {
		out.Seqs = append(out.Seqs, d.Seqs[i])
		out.Labels = append(out.Labels, d.Labels[i])
	}
	return out
}

// writeIDs writes "label<TAB>id id …" lines for bench/pytorch_bilstm.py.
func writeIDs(path string, d Data) error {
	var sb strings.Builder
	for i, s := range d.Seqs {
		fmt.Fprintf(&sb, "%d\t", d.Labels[i])
		for j, id := range s {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(strconv.FormatInt(id, 10))
		}
		sb.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}
