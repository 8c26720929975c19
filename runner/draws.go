package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
)

// drawMemo is analysis.Memo on disk: one file per draws key and number of
// draws, cache/draws/<key>-m<m>.gob.gz, holding every word drawn so far.
// A file that does not verify (gzip's CRC, its key) is treated as empty
// and rewritten. Put rewrites the file atomically with what it held and
// the new words: two processes adding to one file at once may each drop
// the other's words (drawn again later, with the same result), never
// corrupt it.
type drawMemo struct {
	dir, key string
	logf     func(string, ...any)

	mu   sync.Mutex
	held map[int]map[string]map[int32]int // per m: what the file held when read
}

// drawsFile is a memo file: the counts of each word as sorted outputs
// and their counts.
type drawsFile struct {
	Key   string
	M     int
	Words map[string]wordDraws
}

type wordDraws struct {
	Outs, Counts []int32
}

func (d *drawMemo) path(m int) string {
	return filepath.Join(d.dir, fmt.Sprintf("%s-m%d.gob.gz", d.key, m))
}

// load returns what the file of m draws holds (read once).
func (d *drawMemo) load(m int) map[string]map[int32]int {
	if h, ok := d.held[m]; ok {
		return h
	}
	h := map[string]map[int32]int{}
	f, err := readDraws(d.path(m), d.key, m)
	switch {
	case err == nil:
		for w, wd := range f.Words {
			c := make(map[int32]int, len(wd.Outs))
			for i, o := range wd.Outs {
				c[o] = int(wd.Counts[i])
			}
			h[w] = c
		}
	case !errors.Is(err, fs.ErrNotExist):
		d.logf("draws cache %s: %v: drawing again", d.path(m), err)
	}
	if d.held == nil {
		d.held = map[int]map[string]map[int32]int{}
	}
	d.held[m] = h
	return h
}

// Get implements analysis.Memo.
func (d *drawMemo) Get(m int, words []string) (map[string]map[int32]int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.load(m)
	out := map[string]map[int32]int{}
	for _, w := range words {
		if c, ok := h[w]; ok {
			out[w] = c
		}
	}
	return out, nil
}

// Put implements analysis.Memo.
func (d *drawMemo) Put(m int, counts map[string]map[int32]int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.load(m)
	maps.Copy(h, counts)
	f := drawsFile{Key: d.key, M: m, Words: make(map[string]wordDraws, len(h))}
	for w, c := range h {
		outs := slices.Sorted(maps.Keys(c))
		wd := wordDraws{Outs: outs, Counts: make([]int32, len(outs))}
		for i, o := range outs {
			wd.Counts[i] = int32(c[o])
		}
		f.Words[w] = wd
	}
	if err := writeGobGz(d.path(m), f); err != nil {
		return fmt.Errorf("draws cache: %w", err)
	}
	return nil
}

func readDraws(path, key string, m int) (drawsFile, error) {
	var f drawsFile
	if err := readGobGz(path, &f); err != nil {
		return f, err
	}
	if f.Key != key || f.M != m {
		return f, fmt.Errorf("holds other draws (key %.12s, m %d)", f.Key, f.M)
	}
	return f, nil
}

// drawsDir holds the words' sampled outputs (see drawMemo).
const drawsDir = "draws"
