// Package progress owns xp's progress bars: thin wrappers over
// schollz/progressbar/v3 that draw only on a terminal, so CI logs and
// redirected output stay readable, and that cost nothing when no writer is
// given.
package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar is a progress bar; a nil *Bar is valid and draws nothing.
type Bar struct {
	pb      *progressbar.ProgressBar
	w       io.Writer
	stopped bool // finished short of its total
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr }) // an *os.File, or show.Writer over one
	return ok && f.Fd() != ^uintptr(0) && term.IsTerminal(int(f.Fd()))
}

// New returns a bar counting to total (-1: unknown) on w, or nil when w is
// nil or not a terminal. With bytes set it shows sizes and rates in bytes.
func New(w io.Writer, total int64, desc string, bytes bool) *Bar {
	if w == nil || !IsTerminal(w) {
		return nil
	}
	return newBar(w, total, desc, bytes)
}

func newBar(w io.Writer, total int64, desc string, bytes bool) *Bar {
	b := &Bar{w: w}
	b.pb = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(bytes),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionOnCompletion(func() {
			if !b.stopped {
				io.WriteString(w, "\n")
			}
		}),
	)
	return b
}

// Add advances the bar by n.
func (b *Bar) Add(n int64) {
	if b != nil {
		b.pb.Add64(n)
	}
}

// Describe changes the bar's label.
func (b *Bar) Describe(s string) {
	if b != nil {
		b.pb.Describe(s)
	}
}

// Finish ends the bar: filled when its count reached the total (or the
// total is unknown), otherwise left where it stopped, so that an
// interrupted loop's bar shows how far it got instead of jumping to 100%.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	if st := b.pb.State(); st.Max >= 0 && st.CurrentNum < st.Max {
		b.stopped = true
		b.pb.Exit()
		// The bar's last frame may predate the last count (drawing is
		// throttled): replace it by a line that says where it stopped.
		fmt.Fprintf(b.w, "\r\x1b[K%s: stopped at %d of %d\n", st.Description, st.CurrentNum, st.Max)
		return
	}
	b.pb.Finish()
}

// Reader wraps r so that reading advances the bar.
func (b *Bar) Reader(r io.Reader) io.Reader {
	if b == nil {
		return r
	}
	return &reader{r, b}
}

type reader struct {
	r io.Reader
	b *Bar
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.b.Add(int64(n))
	return n, err
}
