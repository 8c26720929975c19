// Package progress owns xp's progress bars: thin wrappers over
// schollz/progressbar/v3 that draw only on a terminal, so CI logs and
// redirected output stay readable, and that cost nothing when no writer is
// given.
package progress

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar is a progress bar; a nil *Bar is valid and draws nothing.
type Bar struct{ pb *progressbar.ProgressBar }

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// New returns a bar counting to total (-1: unknown) on w, or nil when w is
// nil or not a terminal. With bytes set it shows sizes and rates in bytes.
func New(w io.Writer, total int64, desc string, bytes bool) *Bar {
	if w == nil || !IsTerminal(w) {
		return nil
	}
	return &Bar{pb: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(bytes),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionOnCompletion(func() { io.WriteString(w, "\n") }),
	)}
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

// Finish completes the bar.
func (b *Bar) Finish() {
	if b != nil {
		b.pb.Finish()
	}
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
