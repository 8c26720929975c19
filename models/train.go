package models

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/metrics"
	"github.com/xp-nlp/xp/torchrt"
)

// Classifier is what Train needs of a model.
type Classifier interface {
	Step(b *Batch) (float64, error)
	Predict(b *Batch) ([]int64, error)
	Save(path string) error
	Load(path string) error
	// SaveOptimizer and LoadOptimizer write and read the optimizer's
	// state, for checkpoints (see TrainOptions.Checkpoint).
	SaveOptimizer(path string) error
	LoadOptimizer(path string) error
	// Extend appends frozen embedding rows after the vocabulary, for
	// evaluating words the model never trained on through their
	// pretrained vectors (see BiLSTM.Extend).
	Extend(rows []float32) error
}

// Data is a labelled set of token-id sequences, or of sequence pairs
// when Seqs2 is set (Seqs2[i] is the second text of example i).
type Data struct {
	Seqs   [][]int64
	Seqs2  [][]int64
	Labels []int64
	// Types are the token types of each of Seqs (a transformer's
	// sentence pair packed as [CLS] a [SEP] b [SEP]: 0 for a's pieces, 1
	// for b's); nil: none.
	Types [][]int64
}

// Len is the number of examples.
func (d Data) Len() int { return len(d.Seqs) }

func (d Data) check(name string) error {
	switch {
	case len(d.Seqs) == 0:
		return fmt.Errorf("%s data is empty", name)
	case d.Labels != nil && len(d.Labels) != len(d.Seqs):
		return fmt.Errorf("%s data: %d labels for %d examples", name, len(d.Labels), len(d.Seqs))
	case d.Seqs2 != nil && len(d.Seqs2) != len(d.Seqs):
		return fmt.Errorf("%s data: %d second texts for %d examples", name, len(d.Seqs2), len(d.Seqs))
	case d.Types != nil && len(d.Types) != len(d.Seqs):
		return fmt.Errorf("%s data: %d token-type rows for %d examples", name, len(d.Types), len(d.Seqs))
	case d.Types != nil && d.Seqs2 != nil:
		return fmt.Errorf("%s data: token types and second texts: a pair is one or the other", name)
	}
	return nil
}

// batch builds the batch of the examples idx, with labels or without.
func (d Data) batch(idx []int, labelled bool, opt TrainOptions) (*Batch, error) {
	var labels []int64
	if labelled {
		labels = d.Labels
	}
	if d.Seqs2 != nil {
		return NewPairBatch(d.Seqs, d.Seqs2, labels, idx, opt.Pad, opt.MaxLen, opt.Device)
	}
	b, err := NewBatch(d.Seqs, labels, idx, opt.Pad, opt.MaxLen, opt.Device)
	if err == nil && d.Types != nil {
		if err = b.addTypes(d.Types, idx, opt.Device); err != nil {
			b.Drop()
			return nil, err
		}
	}
	return b, err
}

// TrainOptions control Train. The model's own settings (learning rate,
// clipping) are in its config.
type TrainOptions struct {
	Epochs   int    // maximum epochs
	Batch    int    // examples per step
	MaxLen   int    // tokens kept per example (0: all)
	Patience int    // stop after this many epochs without a better validation accuracy (0: never stop early)
	Classes  int    // number of labels
	Pad      int64  // padding token id
	Seed     uint64 // batch order; libtorch's generator is seeded by the caller
	Device   gotch.Device
	// Progress receives a bar per epoch when it is a terminal; Log one
	// line per epoch, per state kept within one, and on resuming. Either
	// may be nil.
	Progress io.Writer
	Log      io.Writer
	// Dir holds the best model's weights during training ("" : a temporary folder).
	Dir string
	// Checkpoint, when set, is a folder where Train keeps its state after
	// every epoch and from which it resumes: a process stopped at any
	// moment and run again with the same model, data and options ends with
	// the same weights, history and scores as one that never stopped. The
	// caller removes it once the result is kept.
	Checkpoint string
	// CheckpointEvery, with Checkpoint, keeps the state within an epoch
	// too, after the first step that ends this long after the last state
	// kept (or the epoch's start): a process stopped mid-epoch loses at
	// most about this much training, where an epoch can take hours
	// (bert-base on a CPU) and the papers' fine-tuning is one epoch. 0:
	// after whole epochs only.
	CheckpointEvery time.Duration
	// checkpointSteps, for tests, keeps the state within an epoch every
	// this many steps.
	checkpointSteps int
	// OnEpoch, when set, is called after each epoch's validation, on the
	// training thread.
	OnEpoch func(metrics.Epoch)
	// lagLoss reads each step's loss after the next step is queued, as
	// Train does on a GPU, on any device (for tests).
	lagLoss bool
}

// lossStepper is a model whose step can leave its loss unread on the
// device (BiLSTM.StepLoss): on a GPU, Train reads step k's loss after
// step k+1 is queued, so that the device is never left idle while the
// host waits for a number (reading it at once drains the queue every
// step). The losses are read in order and summed as before: the same
// numbers, a NaN found one step later.
type lossStepper interface {
	StepLoss(b *Batch) (*ts.Tensor, error)
}

// TrainResult is the history and the epoch whose weights the model holds
// when Train returns.
type TrainResult struct {
	Epochs    []metrics.Epoch        `json:"epochs"`
	BestEpoch int                    `json:"best_epoch"`
	Valid     metrics.Classification `json:"valid"`
}

// Train trains m on train with mini-batches bucketed by length, evaluates
// on valid after every epoch, and keeps the weights of the epoch with the
// best validation accuracy (earliest on ties), stopping early after
// Patience epochs without improvement. It runs on one locked OS thread; a
// libtorch failure returns as an error.
func Train(ctx context.Context, m Classifier, train, valid Data, opt TrainOptions) (TrainResult, error) {
	var res TrainResult
	if opt.Epochs < 1 || opt.Batch < 1 || opt.Classes < 2 {
		return res, fmt.Errorf("train: bad options: %d epochs, batch %d, %d classes", opt.Epochs, opt.Batch, opt.Classes)
	}
	for _, c := range []struct {
		name string
		d    Data
	}{{"training", train}, {"validation", valid}} {
		if err := c.d.check(c.name); err != nil {
			return res, fmt.Errorf("train: %w", err)
		}
		if c.d.Labels == nil {
			return res, fmt.Errorf("train: %s data without labels", c.name)
		}
	}
	dir := opt.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "xp-train")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	best := filepath.Join(dir, "best.ot")
	err := torchrt.Do(func() error {
		bestAcc, since, first := -1.0, 0, 1
		var part partial // the steps of the first epoch taken before
		if opt.Checkpoint != "" {
			ck, ok, err := loadCheckpoint(opt.Checkpoint, m, opt.Device, best)
			if err != nil {
				return fmt.Errorf("train: resume from %s: %w", opt.Checkpoint, err)
			}
			if ok {
				res.Epochs, res.BestEpoch, res.Valid = ck.Epochs, ck.BestEpoch, ck.Valid
				bestAcc, since, first, part = ck.BestAcc, ck.Since, ck.Epoch+1, ck.Partial
				switch {
				case opt.Log == nil:
				case part.Steps > 0:
					fmt.Fprintf(opt.Log, "resuming epoch %d after step %d from %s\n", first, part.Steps, opt.Checkpoint)
				default:
					fmt.Fprintf(opt.Log, "resuming after epoch %d from %s\n", ck.Epoch, opt.Checkpoint)
				}
			}
		}
		for epoch := first; epoch <= opt.Epochs; epoch++ {
			start := time.Now()
			batches := Buckets(train.Seqs, opt.Batch, opt.MaxLen, opt.Seed, epoch)
			if part.Steps >= len(batches) {
				return fmt.Errorf("train: resume from %s: %d steps of epoch %d taken, of %d", opt.Checkpoint, part.Steps, epoch, len(batches))
			}
			bar := progress.New(opt.Progress, int64(len(batches)), fmt.Sprintf("epoch %d", epoch), false)
			bar.Add(int64(part.Steps))
			kept := start
			keep := keeper{
				due: func(steps int) bool {
					switch {
					case opt.Checkpoint == "" || steps == len(batches): // the epoch's end keeps its own
						return false
					case opt.checkpointSteps > 0:
						return steps%opt.checkpointSteps == 0
					}
					return opt.CheckpointEvery > 0 && time.Since(kept) >= opt.CheckpointEvery
				},
				save: func(steps int, sum float64) error {
					ck := checkpoint{Epoch: epoch - 1, Epochs: res.Epochs, BestEpoch: res.BestEpoch, BestAcc: bestAcc, Since: since, Valid: res.Valid,
						Partial: partial{Steps: steps, LossSum: sum, Seconds: part.Seconds + time.Since(start).Seconds()}}
					if err := saveCheckpoint(opt.Checkpoint, m, opt.Device, ck, best); err != nil {
						return fmt.Errorf("train: checkpoint in epoch %d after step %d: %w", epoch, steps, err)
					}
					kept = time.Now()
					if opt.Log != nil {
						fmt.Fprintf(opt.Log, "epoch %d: step %d of %d, state kept\n", epoch, steps, len(batches))
					}
					return nil
				},
			}
			sum, err := epochSteps(ctx, m, train, batches, opt, epoch, part, keep, bar)
			if err != nil {
				return err
			}
			bar.Finish()
			secs := part.Seconds + time.Since(start).Seconds()
			part = partial{}
			met, err := evaluate(m, valid, opt)
			if err != nil {
				return err
			}
			met.Correct = "" // per-example results are kept for the scored split only
			st := metrics.Epoch{Epoch: epoch, Loss: sum / float64(len(batches)), Valid: met, ExamplesPerSec: float64(len(train.Seqs)) / secs}
			res.Epochs = append(res.Epochs, st)
			if opt.OnEpoch != nil {
				opt.OnEpoch(st)
			}
			if opt.Log != nil {
				fmt.Fprintf(opt.Log, "epoch %d: loss %.4f, valid accuracy %.4f macro-F1 %.4f, %.0f examples/s\n", epoch, st.Loss, met.Accuracy, met.MacroF1, st.ExamplesPerSec)
			}
			stop := false
			if met.Accuracy > bestAcc {
				bestAcc, since, res.BestEpoch, res.Valid = met.Accuracy, 0, epoch, met
				if err := m.Save(best); err != nil {
					return err
				}
			} else if since++; opt.Patience > 0 && since >= opt.Patience {
				stop = true
			}
			if opt.Checkpoint != "" && epoch < opt.Epochs && !stop {
				ck := checkpoint{Epoch: epoch, Epochs: res.Epochs, BestEpoch: res.BestEpoch, BestAcc: bestAcc, Since: since, Valid: res.Valid}
				if err := saveCheckpoint(opt.Checkpoint, m, opt.Device, ck, best); err != nil {
					return fmt.Errorf("train: checkpoint after epoch %d: %w", epoch, err)
				}
			}
			if stop {
				break
			}
		}
		if res.BestEpoch != len(res.Epochs) {
			return m.Load(best)
		}
		return nil
	})
	return res, err
}

// Evaluate predicts data with m and scores the predictions.
func Evaluate(m Classifier, data Data, opt TrainOptions) (metrics.Classification, error) {
	var met metrics.Classification
	err := torchrt.Do(func() (err error) {
		met, err = evaluate(m, data, opt)
		return err
	})
	return met, err
}

func evaluate(m Classifier, data Data, opt TrainOptions) (metrics.Classification, error) {
	if err := data.check("evaluation"); err != nil {
		return metrics.Classification{}, err
	}
	pred := make([]int64, len(data.Seqs))
	for _, idx := range Buckets(data.Seqs, max(opt.Batch, 256), opt.MaxLen, 0, 0) {
		b, err := data.batch(idx, false, opt)
		if err != nil {
			return metrics.Classification{}, err
		}
		p, err := m.Predict(b)
		b.Drop()
		if err != nil {
			return metrics.Classification{}, err
		}
		for j, i := range idx {
			pred[i] = p[j]
		}
	}
	return metrics.Score(data.Labels, pred, opt.Classes)
}

// Buckets cuts the examples into batches of similar length: a seeded
// shuffle (PCG of seed and epoch; epoch 0 means no shuffle), chunks of 50
// batches sorted by length, cut into batches whose order is shuffled
// again. The same arguments give the same batches.
func Buckets(seqs [][]int64, batch, maxLen int, seed uint64, epoch int) [][]int {
	n := len(seqs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	var r *rand.Rand
	if epoch > 0 {
		r = rand.New(rand.NewPCG(seed, uint64(epoch)))
		r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	length := func(i int) int {
		if maxLen > 0 {
			return min(len(seqs[i]), maxLen)
		}
		return len(seqs[i])
	}
	var out [][]int
	chunk := 50 * batch
	for lo := 0; lo < n; lo += chunk {
		c := order[lo:min(n, lo+chunk)]
		slices.SortStableFunc(c, func(a, b int) int { return cmp.Compare(length(a), length(b)) })
		for b := 0; b < len(c); b += batch {
			out = append(out, c[b:min(len(c), b+batch)])
		}
	}
	if r != nil {
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

// TagOptions control TrainTagger and PredictTags.
type TagOptions struct {
	Epochs int // passes over the training sequences (no validation: all are run)
	Batch  int // sequences per step
	// Seed and Stream seed the PCG that shuffles the sequences' order
	// afresh each epoch (a plain shuffle: taggers' batches are not
	// bucketed by length).
	Seed, Stream uint64
	Device       gotch.Device
}

// TrainTagger trains t on the tagged sequences for opt.Epochs epochs,
// each over the sequences in a freshly shuffled order cut into batches
// of opt.Batch. Like Train, it runs on one locked OS thread; seed
// libtorch's generator before creating t (torchrt.ManualSeed).
func TrainTagger(ctx context.Context, t *Tagger, seqs, tags [][]int64, opt TagOptions) error {
	if opt.Epochs < 1 || opt.Batch < 1 {
		return fmt.Errorf("train tagger: bad options: %d epochs, batch %d", opt.Epochs, opt.Batch)
	}
	return torchrt.Do(func() error {
		r := rand.New(rand.NewPCG(opt.Seed, opt.Stream))
		order := make([]int, len(seqs))
		for i := range order {
			order[i] = i
		}
		for range opt.Epochs {
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for lo := 0; lo < len(order); lo += opt.Batch {
				if err := ctx.Err(); err != nil {
					return err
				}
				b, err := NewTagBatch(seqs, tags, order[lo:min(len(order), lo+opt.Batch)], 0, 0, opt.Device)
				if err != nil {
					return err
				}
				_, err = t.Step(b)
				b.Drop()
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// PredictTags is t's tag of every token of seqs, in batches of 256
// sequences in their order.
func PredictTags(t *Tagger, seqs [][]int64, device gotch.Device) ([][]int64, error) {
	pred := make([][]int64, len(seqs))
	err := torchrt.Do(func() error {
		for lo := 0; lo < len(seqs); lo += 256 {
			idx := make([]int, 0, 256)
			for i := lo; i < min(len(seqs), lo+256); i++ {
				idx = append(idx, i)
			}
			b, err := NewTagBatch(seqs, nil, idx, 0, 0, device)
			if err != nil {
				return err
			}
			p, err := t.Predict(b)
			b.Drop()
			if err != nil {
				return err
			}
			for k, i := range idx {
				pred[i] = p[k]
			}
		}
		return nil
	})
	return pred, err
}

// keeper keeps Train's state within an epoch: due says whether to after
// a number of the epoch's steps, save keeps it (sum: their losses).
type keeper struct {
	due  func(steps int) bool
	save func(steps int, sum float64) error
}

// epochSteps takes one optimisation step per batch of train from
// from.Steps on, keeps the state where keep says, and returns from.LossSum
// plus the sum of the steps' losses. On a GPU (or with lagLoss) a
// lossStepper's losses are read one step late, in order: the same sum
// (and read at once where the state is kept, which holds them all).
func epochSteps(ctx context.Context, m Classifier, train Data, batches [][]int, opt TrainOptions, epoch int, from partial, keep keeper, bar *progress.Bar) (sum float64, err error) {
	lagged, lag := m.(lossStepper)
	lag = lag && (opt.Device.IsCuda() || opt.lagLoss)
	var pending *ts.Tensor // the last step's loss, unread (lag)
	defer func() {
		if pending != nil {
			pending.Drop()
		}
	}()
	read := func() error { // reads and drops pending
		t := pending
		pending = nil
		if t == nil {
			return nil
		}
		loss, err := readLoss(t, nil)
		if err != nil {
			return fmt.Errorf("epoch %d: %w", epoch, err)
		}
		sum += loss
		return nil
	}
	sum = from.LossSum
	for k := from.Steps; k < len(batches); k++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		b, err := train.batch(batches[k], true, opt)
		if err != nil {
			return 0, err
		}
		if !lag {
			loss, err := m.Step(b)
			b.Drop()
			if err != nil {
				return 0, fmt.Errorf("epoch %d: %w", epoch, err)
			}
			sum += loss
		} else {
			next, err := lagged.StepLoss(b)
			b.Drop()
			if err != nil {
				return 0, fmt.Errorf("epoch %d: %w", epoch, err)
			}
			if err := read(); err != nil {
				next.Drop()
				return 0, err
			}
			pending = next
		}
		bar.Add(1)
		if keep.due(k + 1) {
			if err := read(); err != nil { // the state kept holds every step's loss so far
				return 0, err
			}
			if err := keep.save(k+1, sum); err != nil {
				return 0, err
			}
		}
	}
	if err := read(); err != nil {
		return 0, err
	}
	return sum, nil
}
