// Package xio owns how xp reads and writes files: opening an input
// whatever its packaging (plain, gzip, a member of a zip archive), reading
// it line by line with the line number at hand for error messages (a
// byte-order mark dropped), and writing outputs and caches atomically
// through temporaries that honour the umask, name their owner, and are
// cleaned up only once that owner is gone (CleanTemps).
package xio

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/xp-nlp/xp/internal/srcerr"
)

// SplitMember splits "archive.zip#member.txt" into the archive and the
// member's name; any other path is a file of its own, whatever '#' it
// holds (a folder named "run#2" is no archive).
func SplitMember(path string) (file, member string) {
	if i := strings.Index(path, ".zip#"); i >= 0 {
		return path[:i+len(".zip")], path[i+len(".zip#"):]
	}
	return path, ""
}

// Open opens path for reading, decompressing .gz files and opening the
// only regular member of a .zip archive (or, for "archive.zip#member.txt",
// the named member: SplitMember). Name is the path to show in messages.
// Only a regular file (or a link to one) is opened: a device or a FIFO is
// refused (*NotRegularInput).
func Open(path string) (rc io.ReadCloser, name string, err error) {
	file, member := SplitMember(path)
	switch {
	case strings.HasSuffix(file, ".zip"):
		return openZip(file, member)
	case strings.HasSuffix(file, ".gz"):
		f, err := OpenRegular(file)
		if err != nil {
			return nil, file, err
		}
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			f.Close()
			return nil, file, srcerr.At(file, 0, "not a gzip file: %w", err)
		}
		return &stacked{Reader: zr, closers: []io.Closer{zr, f}}, file, nil
	default:
		f, err := OpenRegular(file)
		if err != nil {
			return nil, file, err
		}
		return f, file, nil
	}
}

func openZip(file, member string) (io.ReadCloser, string, error) {
	if _, err := Regular(file); err != nil {
		return nil, file, err
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		return nil, file, srcerr.At(file, 0, "not a zip archive: %w", err)
	}
	var pick *zip.File
	var names []string
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		names = append(names, f.Name)
		if member == "" || f.Name == member {
			pick = f
		}
	}
	switch {
	case member != "" && pick == nil:
		zr.Close()
		return nil, file, srcerr.At(file, 0, "no member %q in archive", member)
	case member == "" && len(names) != 1:
		zr.Close()
		return nil, file, srcerr.At(file, 0, "archive has %d files %v; name one as %s#MEMBER", len(names), names, file)
	}
	r, err := pick.Open()
	if err != nil {
		zr.Close()
		return nil, file, srcerr.At(file, 0, "open member %s: %w", pick.Name, err)
	}
	name := file + "#" + pick.Name
	return &stacked{Reader: r, closers: []io.Closer{r, zr}}, name, nil
}

type stacked struct {
	io.Reader
	closers []io.Closer
}

func (s *stacked) Close() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Lines reads r line by line. Line endings (LF or CRLF) are removed. Err
// places a read failure (a truncated gzip stream, for instance) at the line
// where it happened.
type Lines struct {
	sc   *bufio.Scanner
	name string
	n    int
	err  error
}

// MaxLine is the longest line Lines accepts (GloVe 840B rows are ~3 KB;
// a review can be tens of KB).
const MaxLine = 64 << 20

// LineTooLong is the error of a reader CapLines wraps when a line
// exceeds its cap: Line is its 1-based number.
type LineTooLong struct {
	Line, Max int
}

func (e *LineTooLong) Error() string {
	return fmt.Sprintf("line longer than %d bytes (the longest a line may be)", e.Max)
}

// CapLines wraps r so that reading fails with *LineTooLong once a line
// (the bytes between two newlines) exceeds max bytes: a reader that keeps
// a line or record whole, as encoding/csv does, then holds at most max
// bytes of it instead of the whole file.
func CapLines(r io.Reader, max int) io.Reader { return &lineCap{r: r, max: max} }

type lineCap struct {
	r        io.Reader
	max, cur int
	line     int // newlines seen
	err      error
}

func (l *lineCap) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i := 0; i < n; {
		j := bytes.IndexByte(p[i:n], '\n')
		if j < 0 {
			j = n - i
		}
		if l.cur+j > l.max {
			l.err = &LineTooLong{Line: l.line + 1, Max: l.max}
			return i, l.err
		}
		l.cur += j
		i += j
		if i < n { // a newline
			l.line++
			l.cur = 0
			i++
		}
	}
	return n, err
}

// NewLines returns a line reader over r; name is used in errors. A UTF-8
// byte-order mark at the start is dropped.
func NewLines(r io.Reader, name string) *Lines {
	sc := bufio.NewScanner(SkipBOM(r))
	sc.Buffer(make([]byte, 0, 1<<16), MaxLine)
	return &Lines{sc: sc, name: name}
}

// Next advances to the next line and reports whether there is one.
func (l *Lines) Next() bool {
	if !l.sc.Scan() {
		if err := l.sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = fmt.Errorf("line longer than %d bytes", MaxLine)
			}
			l.err = srcerr.Wrap(l.name, l.n+1, err)
		}
		return false
	}
	l.n++
	return true
}

// Bytes returns the current line without its line ending. It is valid
// until the next call of Next.
func (l *Lines) Bytes() []byte {
	b := l.sc.Bytes()
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// Text returns the current line as a string.
func (l *Lines) Text() string { return string(l.Bytes()) }

// N is the 1-based number of the current line.
func (l *Lines) N() int { return l.n }

// Err returns the read error that stopped Next, positioned at its line.
func (l *Lines) Err() error { return l.err }

// Errorf returns an error positioned at the current line.
func (l *Lines) Errorf(format string, args ...any) error {
	return srcerr.At(l.name, l.n, format, args...)
}

// Gunzip returns a gzip reader over r; name is used in errors.
func Gunzip(r io.Reader, name string) (*gzip.Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, srcerr.At(name, 0, "not a gzip file: %w", err)
	}
	return zr, nil
}

// SHA256File returns the hex sha256 of a file's bytes as stored.
func SHA256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Temporary files and folders that xp writes next to their final place
// are named ".<base>.<host>.<pid>.<random>.tmp": CleanTemps can then tell
// a temporary of a process that is gone (removed) from one of a live
// process, here or on another machine sharing the folder (left alone).
// They are created with mode 0666 (files) or 0777 (folders) less the
// umask, like any other file: group-shared folders stay shared.

var host = func() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return strings.ReplaceAll(h, ".", "_")
}()

func tempName(base string) string {
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf(".%s.%s.%d.%s.tmp", base, host, os.Getpid(), hex.EncodeToString(b[:]))
}

// CreateTemp creates a new temporary file in dir for the final name base.
func CreateTemp(dir, base string) (*os.File, error) {
	for {
		f, err := os.OpenFile(filepath.Join(dir, tempName(base)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// MkdirTemp creates a new temporary folder in dir (created if missing).
func MkdirTemp(dir, base string) (string, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, tempName(base))
		err := os.Mkdir(p, 0o777)
		if !errors.Is(err, fs.ErrExist) {
			return p, err
		}
	}
}

// IsTemp reports whether name is one of xp's temporaries.
func IsTemp(name string) bool {
	_, _, ok := tempOwner(name)
	return ok
}

// tempOwner parses a temporary's name: the host and process that made it.
func tempOwner(name string) (h string, pid int, ok bool) {
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
		return "", 0, false
	}
	f := strings.Split(strings.TrimSuffix(name, ".tmp"), ".")
	if len(f) < 5 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(f[len(f)-2])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return f[len(f)-3], pid, true
}

// StaleAfter is the age after which another machine's temporary in a
// shared folder is taken for the leftover of a crashed process: writing
// one file never takes that long.
const StaleAfter = 24 * time.Hour

// CleanTemps removes the temporaries in dir left by processes that are
// gone: this machine's whose process no longer exists, and other
// machines' older than StaleAfter. Live processes' temporaries and files
// xp did not write are left alone. It returns the names removed.
func CleanTemps(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range ents {
		h, pid, ok := tempOwner(e.Name())
		if !ok {
			continue
		}
		stale := false
		if h == host {
			stale = !alive(pid)
		} else if info, err := e.Info(); err == nil {
			stale = time.Since(info.ModTime()) > StaleAfter
		}
		if stale {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return removed, err
			}
			removed = append(removed, e.Name())
		}
	}
	return removed, nil
}

// alive reports whether a process with this id exists on this machine.
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// folder, synced and renamed, so a reader (or a run killed midway) never
// sees a partial file. The file's mode is 0666 less the umask. A failed
// write removes only its own temporary: what was at path stays as it was.
func WriteFileAtomic(path string, data []byte) error {
	return replaceWith(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// replaceWith writes path through a temporary file in the same folder:
// write fills the open temporary, which is then synced and renamed onto
// path. Where write, the sync or the rename fails, the temporary is
// removed and path is left as it was. A path that exists and is not a
// regular file or a symbolic link (a device such as /dev/full, a FIFO,
// a folder) is refused before anything is created: renaming onto it
// would replace a node xp did not make.
func replaceWith(path string, write func(f *os.File) error) error {
	if err := replaceable(path); err != nil {
		return err
	}
	tmp, err := CreateTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // a no-op once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return withPath(err, path)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return withPath(err, path)
	}
	if err := tmp.Close(); err != nil {
		return withPath(err, path)
	}
	return os.Rename(name, path)
}

// NotRegular is the error of a write whose target exists and is neither
// a regular file nor a symbolic link.
type NotRegular struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegular) Error() string {
	return fmt.Sprintf("refusing to replace %s: it is a %s, not a regular file", e.Path, modeWord(e.Mode))
}

func modeWord(m fs.FileMode) string {
	switch {
	case m&fs.ModeDir != 0:
		return "folder"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

func replaceable(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if m := info.Mode(); !m.IsRegular() && m&fs.ModeSymlink == 0 {
		return &NotRegular{Path: path, Mode: m}
	}
	return nil
}

// withPath names path in err unless err already does (the temporary's
// name means nothing to a reader).
func withPath(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("write %s: %w", path, pe.Err)
	}
	if strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("write %s: %w", path, err)
}

// CheckWritable makes sure dir exists (creating it) and that a file can
// be created in it: the error names the path, before any work is done.
func CheckWritable(what, dir string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("%s %s is not a writable folder: %w", what, dir, err)
	}
	f, err := CreateTemp(dir, "write-check")
	if err != nil {
		return fmt.Errorf("%s %s is not writable: %w", what, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// SkipBOM drops a UTF-8 byte-order mark at the start of r (spreadsheets
// write one at the start of CSV and TSV files).
func SkipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\uFEFF" {
		br.Discard(3)
	}
	return br
}

// SamePath reports whether two paths, relative to the current folder or
// absolute, name one file or folder ("" names none).
func SamePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// SameFile reports whether a and b name one file: the same path, or two
// paths (links, another spelling) to one existing file.
func SameFile(a, b string) bool {
	if SamePath(a, b) {
		return true
	}
	x, err1 := os.Stat(a)
	y, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(x, y)
}

// OpenLock opens (creating it) the lock file at path for reading and
// writing without following a symbolic link there, and only when it is a
// regular file: a lock that is a link would let whoever made the link
// have xp truncate the file it points to; a device or FIFO would block
// or be written into. The caller locks and writes the returned file.
func OpenLock(path string) (*os.File, error) {
	f, odd, err := openKind(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, fmt.Errorf("refusing to open the lock %s: it is a symbolic link (xp makes its lock itself; remove the link)", path)
	case err != nil:
		return nil, err
	case f == nil:
		return nil, fmt.Errorf("refusing to use the lock %s: it is a %s, not a regular file", path, modeWord(odd))
	}
	return f, nil
}

// openKind opens path with flag and perm, without blocking on a FIFO,
// and keeps the file only when it is a regular one: otherwise f is nil
// and odd is the mode found there. The doors below say what that means
// for each use.
func openKind(path string, flag int, perm fs.FileMode) (f *os.File, odd fs.FileMode, err error) {
	f, err = os.OpenFile(path, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if m := info.Mode(); !m.IsRegular() {
		f.Close()
		return nil, m, nil
	}
	return f, 0, nil
}

// OpenRegular opens path for reading only where it is (or links to) a
// regular file: a device (/dev/zero) would be read for ever, a FIFO would
// block the open itself (it is opened without blocking, then refused).
func OpenRegular(path string) (*os.File, error) {
	f, odd, err := openKind(path, os.O_RDONLY, 0)
	if err == nil && f == nil {
		err = &NotRegularInput{Path: path, Mode: odd}
	}
	return f, err
}

// NotRegularInput is the error of a read of something that is not a
// regular file (a device, a FIFO, a folder).
type NotRegularInput struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularInput) Error() string {
	return fmt.Sprintf("%s is a %s, not a regular file", e.Path, modeWord(e.Mode))
}

// Regular is os.Stat of path where it is (or links to) a regular file,
// and a *NotRegularInput otherwise.
func Regular(path string) (fs.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &NotRegularInput{Path: path, Mode: info.Mode()}
	}
	return info, nil
}

// ReadFileMax reads path, which must be a regular file of at most max
// bytes: the one door through which xp reads the files it keeps itself
// (records, plans, manifests, configs), so that one that was replaced by
// a link to /dev/zero, a FIFO or a giant file is refused in one line.
func ReadFileMax(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, at most %d expected here", path, info.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: more than %d bytes, at most %d expected here", path, max, max)
	}
	return b, nil
}

// Sizes ReadFileMax is given: a record or state file of a run, a config,
// one text of a corpus kept a file a text (an IMDb review, an Enron
// message, a file of a folder dataset).
const (
	MaxRecord = 256 << 20
	MaxConfig = 4 << 20
	MaxText   = 64 << 20
	// MaxCache bounds an entry of xp's cache (a structure derived from
	// an embedding, a model's weights, a privatized corpus).
	MaxCache = 64 << 30
)

// ReadGzipMax reads the gzip file path, which must be a regular file, to
// its trailer (so that its CRC-32 catches damage and truncation) and
// returns what it inflates to: at most max bytes, and at most
// MaxInflation times the file's size (plus 64 MiB) whatever max says, so
// that a small file that inflates without end (a gzip bomb) is refused
// after reading that much, not after exhausting memory. Data xp writes
// compresses far less than that; a bomb compresses about a thousandfold.
func ReadGzipMax(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if b := MaxInflation*info.Size() + 64<<20; b < max {
		max = b
	}
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip file: %w", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: inflates to more than %d bytes (from %d): not a file xp wrote", path, max, info.Size())
	}
	return b, nil
}

// MaxInflation is the most that ReadGzipMax lets a file inflate by.
const MaxInflation = 64

// OpenWrite opens path for writing (os.O_WRONLY|os.O_CREATE and flags:
// os.O_APPEND to resume a download, os.O_TRUNC to start it again) for
// the files xp writes in place rather than by rename (a download's .part
// file, which a later run resumes): without following a symbolic link
// there, and only a regular file, as OpenLock.
func OpenWrite(path string, flags int) (*os.File, error) {
	f, odd, err := openKind(path, os.O_WRONLY|os.O_CREATE|flags|syscall.O_NOFOLLOW, 0o666)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, fmt.Errorf("refusing to write %s: it is a symbolic link", path)
	case err != nil:
		return nil, err
	case f == nil:
		return nil, &NotRegular{Path: path, Mode: odd}
	}
	return f, nil
}
