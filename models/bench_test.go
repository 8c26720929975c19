package models

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/xp-nlp/xp/internal/realdata"
	"github.com/xp-nlp/xp/torchrt"
)

// BenchmarkTrainVsPyTorch trains the same biLSTM (frozen 300-d
// embeddings, 1×128 bidirectional LSTM, dropout 0.5, Adam, clipping 5,
// batch 64) for one epoch on the same token ids with xp and with
// bench/pytorch_bilstm.py (Debian's python3-torch: the same libtorch
// library), on identical inputs: xp's own batches (Buckets) and its
// embedding matrix are written out and the PyTorch twin trains on exactly
// those batches and values, rows sorted and padded the same way. Each
// side warms up first (xp: one untimed training on two batches; PyTorch:
// two untimed batches in each process). The runs alternate xp, PyTorch,
// PyTorch with OMP_WAIT_POLICY=passive, … (XP_REPEATS rounds, default
// 3), so that load on the machine falls on all alike; it reports each
// PyTorch variant's median ratio xp/PyTorch with min and max, and the
// rates. PyTorch runs twice because libgomp's default (spinning idle
// workers) is pathological here (docs/models.md): at 2 threads on 2
// cores the workers spin against OpenBLAS's threads and an LSTM step
// runs 3× slower than at 1 thread; a passive wait policy removes that.
// xp's side runs with the policy this process started with (make
// bench-pytorch and bin/xp: passive). Short sentences
// (SST-2, cut to 64 tokens) and long reviews (IMDb, cut to 256).
// XP_THREADS sets the intra-op threads of both (default: all cores).
// Needs XP_DATA and python3 with torch (scripts/setup.sh pytorch):
//
//	make bench-pytorch
func BenchmarkTrainVsPyTorch(b *testing.B) {
	root := realdata.Root(b)
	python := torchPython()
	if python == "" {
		b.Skip("SKIP: no python3 with torch (XP_PYTHON, python3, /usr/bin/python3 tried; scripts/setup.sh pytorch installs Debian's python3-torch)")
	}
	threads, repeats := benchEnv()
	variants := []struct{ name, env string }{{"PyTorch spinning", ""}, {"PyTorch passive", "OMP_WAIT_POLICY=passive"}}
	for _, c := range []struct {
		dataset string
		n       int
		maxLen  int
	}{
		{"sst2", 8000, 64},
		{"imdb", 1024, 256},
	} {
		b.Run(c.dataset, func(b *testing.B) {
			r := loadReal(b, root, c.dataset, nil, "train")
			train := sample(r.data["train"], c.n)
			valid := sample(r.data["train"], 64)
			dir := b.TempDir()
			ids, batches, emb := filepath.Join(dir, "ids.tsv"), filepath.Join(dir, "batches.txt"), filepath.Join(dir, "embedding.f32")
			opt := TrainOptions{Epochs: 1, Batch: 64, MaxLen: c.maxLen, Classes: 2, Seed: 1, Device: gotch.CPU, Dir: dir}
			if err := writeIDs(ids, train); err != nil {
				b.Fatal(err)
			}
			if err := writeBatches(batches, Buckets(train.Seqs, opt.Batch, opt.MaxLen, opt.Seed, 1)); err != nil {
				b.Fatal(err)
			}
			if err := writeFloats(emb, r.pre); err != nil {
				b.Fatal(err)
			}
			if err := torchrt.SetThreads(threads); err != nil {
				b.Fatal(err)
			}
			xpEpoch := func(d Data) float64 {
				var res TrainResult
				err := torchrt.Do(func() error {
					torchrt.ManualSeed(1)
					m, err := NewBiLSTM(BiLSTMConfig{Vocab: int64(r.vocab.Len()), EmbedDim: int64(r.emb.Dim), Hidden: 128, Layers: 1, Classes: 2,
						Dropout: 0.5, LR: 1e-3, ClipNorm: 5, Pretrained: r.pre, Freeze: true}, gotch.CPU)
					if err != nil {
						return err
					}
					defer m.Close()
					res, err = Train(context.Background(), m, d, valid, opt)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				return res.Epochs[0].ExamplesPerSec
			}
			xpEpoch(Data{Seqs: train.Seqs[:2*opt.Batch], Labels: train.Labels[:2*opt.Batch]}) // warm-up, untimed
			torchEpoch := func(env string) (float64, string) {
				cmd := exec.Command(python, "../bench/pytorch_bilstm.py", "--data", ids, "--batches", batches, "--embedding", emb, "--warmup", "2",
					"--vocab", strconv.Itoa(r.vocab.Len()), "--dim", strconv.Itoa(r.emb.Dim), "--maxlen", strconv.Itoa(c.maxLen), "--threads", strconv.Itoa(threads))
				cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "OMP_WAIT_POLICY=") })
				if env != "" {
					cmd.Env = append(cmd.Env, env)
				}
				return runTwin(b, cmd)
			}
			var xps []float64
			pts := make([][]float64, len(variants))
			ratios := make([][]float64, len(variants))
			torch := ""
			for i := 0; i < repeats; i++ {
				xp := xpEpoch(train)
				xps = append(xps, xp)
				line := fmt.Sprintf("%s round %d: xp %.1f", c.dataset, i+1, xp)
				for v, variant := range variants {
					pt, version := torchEpoch(variant.env)
					torch = version
					pts[v], ratios[v] = append(pts[v], pt), append(ratios[v], xp/pt)
					line += fmt.Sprintf(", %s %.1f (%.3f)", variant.name, pt, xp/pt)
				}
				b.Log(line + " examples/s (xp/PyTorch)")
			}
			xm, _, _ := medianRange(xps)
			b.ReportMetric(xm, "xp-ex/s")
			for v, variant := range variants {
				med, lo, hi := medianRange(ratios[v])
				pm, _, _ := medianRange(pts[v])
				b.Logf("%s: %d examples, max length %d, %d threads, %d rounds: xp (OMP_WAIT_POLICY=%s)/%s %s median %.3f (min %.3f, max %.3f); xp %.1f, PyTorch %.1f examples/s (medians)",
					c.dataset, len(train.Seqs), c.maxLen, threads, repeats, cmp.Or(os.Getenv("OMP_WAIT_POLICY"), "unset"), variant.name, torch, med, lo, hi, xm, pm)
				unit := strings.ReplaceAll(strings.ToLower(variant.name), " ", "-")
				b.ReportMetric(med, "xp/"+unit)
				b.ReportMetric(lo, "xp/"+unit+"-min")
				b.ReportMetric(hi, "xp/"+unit+"-max")
			}
		})
	}
}

// runTwin runs a PyTorch twin (bench/pytorch_*.py) and reads the one
// JSON line it prints: its examples per second and torch's version.
func runTwin(b *testing.B, cmd *exec.Cmd) (float64, string) {
	b.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("pytorch: %v: %s", err, stderr.String())
	}
	var got struct {
		ExamplesPerSec float64 `json:"examples_per_sec"`
		Torch          string  `json:"torch"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		b.Fatalf("pytorch output %q: %v", out, err)
	}
	return got.ExamplesPerSec, got.Torch
}

// writeFloats writes v as little-endian float32s (torch.from_file reads
// them).
func writeFloats(path string, v []float32) error {
	buf := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(f))
	}
	return os.WriteFile(path, buf, 0o644)
}

// medianRange is the median, minimum and maximum of x.
// benchEnv is what the PyTorch comparisons read from the environment:
// XP_THREADS, both sides' intra-op threads (default: every core), and
// XP_REPEATS, the interleaved rounds (default 3).
func benchEnv() (threads, repeats int) {
	threads, repeats = runtime.NumCPU(), 3
	if v, err := strconv.Atoi(os.Getenv("XP_THREADS")); err == nil && v > 0 {
		threads = v
	}
	if v, err := strconv.Atoi(os.Getenv("XP_REPEATS")); err == nil && v > 0 {
		repeats = v
	}
	return threads, repeats
}

func medianRange(x []float64) (med, lo, hi float64) {
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// writeBatches writes one batch per line (its example indices) for
// bench/pytorch_bilstm.py --batches.
func writeBatches(path string, batches [][]int) error {
	var sb strings.Builder
	for _, idx := range batches {
		for j, i := range idx {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(strconv.Itoa(i))
		}
		sb.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
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
