package catalog

import (
	"archive/tar"
	"archive/zip"
	"cmp"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xp-nlp/xp/datasets"
	"github.com/xp-nlp/xp/internal/progress"
	"github.com/xp-nlp/xp/internal/xio"
)

// FetchOptions tune Fetch.
type FetchOptions struct {
	// Mirror is a folder to copy from instead of downloading: it holds the
	// artifact's files at the same relative paths or by their base names,
	// or (for a dataset) the corpus in any layout xp reads.
	Mirror string
	Client *http.Client // nil: http.DefaultClient
	// Progress receives progress bars when it is a terminal.
	Progress io.Writer
	// Log receives one line per action; nil discards.
	Log io.Writer
	// Retries is how many times an interrupted download is resumed
	// before Fetch gives up (the .part file stays for a later run).
	Retries int
	// MaxUnpacked and MaxMembers bound what an archive may unpack to: its
	// bytes and its files (0: DefaultMaxUnpacked, DefaultMaxMembers). An
	// archive that passes either is refused, its unpacked files left
	// where they are and the extraction not marked finished.
	MaxUnpacked int64
	MaxMembers  int
}

// Bounds of an unpacked archive: the largest the catalog holds (GloVe
// 840B, 5.6 GB; IMDb's 100,000 reviews) fit well within them.
const (
	DefaultMaxUnpacked = 64 << 30
	DefaultMaxMembers  = 1 << 20
)

func (o FetchOptions) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// Fetch brings artifact a into root: each file is downloaded (resuming a
// previous partial download) or copied from the mirror, verified against
// its published checksum and moved into place; archives marked Unpack are
// then extracted. Files already present and verified are left alone.
func Fetch(ctx context.Context, a Artifact, root string, opt FetchOptions) error {
	if root == "" {
		return fmt.Errorf("fetch %s: no data root (set %s or pass --data)", a.Name, datasets.EnvRoot)
	}
	if opt.Mirror != "" {
		done, err := fromMirrorLayout(a, root, opt)
		if err != nil || done {
			return err
		}
	}
	if len(a.Files) == 0 {
		return fmt.Errorf("fetch %s: nothing to download: %s", a.Name, a.Note)
	}
	for _, f := range a.Files {
		if err := fetchFile(ctx, a, f, root, opt); err != nil {
			return fmt.Errorf("fetch %s: %w", a.Name, err)
		}
	}
	if a.Unpack {
		if err := unpack(ctx, a, root, opt); err != nil {
			return fmt.Errorf("fetch %s: unpack: %w", a.Name, err)
		}
	}
	return nil
}

func fetchFile(ctx context.Context, a Artifact, f File, root string, opt FetchOptions) error {
	dest := f.Local(root)
	if _, err := os.Stat(dest); err == nil {
		if err := Verify(dest, f.Sum); err != nil {
			return fmt.Errorf("%s exists but %w; remove it to fetch again", dest, err)
		}
		opt.logf("%s: present, %s", dest, verdict(f.Sum))
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o777); err != nil {
		return err
	}
	part := dest + ".part"
	switch {
	case opt.Mirror != "":
		src, err := findInMirror(opt.Mirror, f.Path)
		if err != nil {
			return err
		}
		opt.logf("%s: copying from %s", dest, src)
		if err := copyFile(ctx, src, part, opt.Progress); err != nil {
			return err
		}
	case f.URL == "":
		return fmt.Errorf("%s has no public URL: %s", f.Path, a.Note)
	default:
		opt.logf("%s: downloading %s", dest, f.URL)
		var err error
		for try := 0; try <= opt.Retries; try++ {
			err = download(ctx, opt.client(), f.URL, part, f.Sum != "", opt)
			var perm permanent
			if err == nil || ctx.Err() != nil || errors.As(err, &perm) {
				break
			}
			opt.logf("%s: %v; retrying", dest, err)
		}
		var perm permanent
		switch {
		case errors.As(err, &perm):
			return err
		case err != nil:
			return fmt.Errorf("%w (the partial file %s is kept: run again to resume%s)", err, part, unlessChanged(f.Sum))
		}
	}
	if err := Verify(part, f.Sum); err != nil {
		os.Remove(part)
		os.Remove(part + ".meta")
		return fmt.Errorf("%s: %w; the download was removed", f.Path, err)
	}
	if err := os.Rename(part, dest); err != nil {
		return err
	}
	os.Remove(part + ".meta")
	opt.logf("%s: done, %s", dest, verdict(f.Sum))
	return nil
}

func (o FetchOptions) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return http.DefaultClient
}

func verdict(sum string) string {
	if sum == "" {
		return "no published checksum to verify"
	}
	return "checksum verified (" + sum[:strings.IndexByte(sum, ':')] + ")"
}

// permanent is a download failure that retrying cannot mend (the file
// is not there, or access is refused).
type permanent struct{ error }

func unlessChanged(sum string) string {
	if sum != "" {
		return ""
	}
	return "; with no published checksum, only if the server confirms the file unchanged"
}

// partMeta is what the server said of a file when its download started:
// the validators that let a later request check that the rest belongs to
// the same file.
type partMeta struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	Total        int64  `json:"total"` // −1 unknown
}

func (m partMeta) validator() string {
	if m.ETag != "" && !strings.HasPrefix(m.ETag, "W/") {
		return m.ETag // a weak ETag may not validate a range (RFC 9110 §13.1.5)
	}
	return m.LastModified
}

func readMeta(path string) partMeta {
	m := partMeta{Total: -1}
	if b, err := xio.ReadFileMax(path, 1<<20); err == nil {
		json.Unmarshal(b, &m)
	}
	return m
}

// download appends to part from where it stops, asking the server for the
// rest with a Range request. A partial file is resumed only when the
// result can be trusted: the file has a published checksum (verified
// once complete), or the server confirms through If-Range that the file
// is the one the partial download began (else it sends the whole file
// and the download restarts). A server that ignores ranges restarts it.
func download(ctx context.Context, client *http.Client, url, part string, checksum bool, opt FetchOptions) error {
	var off int64
	if st, err := os.Stat(part); err == nil {
		off = st.Size()
	}
	meta := readMeta(part + ".meta")
	if off > 0 && !checksum && meta.validator() == "" {
		opt.logf("%s: no published checksum and no validator from the server to check %d partial bytes against: starting again", part, off)
		off = 0
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
		if v := meta.validator(); v != "" {
			req.Header.Set("If-Range", v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	flags := 0
	switch {
	case resp.StatusCode == http.StatusPartialContent && off > 0 && strings.HasPrefix(resp.Header.Get("Content-Range"), "bytes "+strconv.FormatInt(off, 10)+"-"):
		flags |= os.O_APPEND
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && off > 0 && (checksum || meta.Total == off):
		return nil // already complete; Verify decides
	case resp.StatusCode == http.StatusOK:
		flags |= os.O_TRUNC
		off = 0
		meta = partMeta{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), Total: resp.ContentLength}
		if b, err := json.Marshal(meta); err == nil {
			if err := xio.WriteFileAtomic(part+".meta", b); err != nil {
				return err
			}
		}
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return permanent{fmt.Errorf("GET %s: not found (%s)", url, resp.Status)}
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests:
		return permanent{fmt.Errorf("GET %s: %s", url, resp.Status)}
	default:
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	out, err := xio.OpenWrite(part, flags)
	if err != nil {
		return err
	}
	total := int64(-1)
	if resp.ContentLength >= 0 {
		total = off + resp.ContentLength
	}
	bar := progress.New(opt.Progress, total, filepath.Base(strings.TrimSuffix(part, ".part")), true)
	bar.Add(off)
	n, err := io.Copy(out, bar.Reader(resp.Body))
	bar.Finish()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("GET %s: interrupted after %d bytes: %w", url, off+n, err)
	}
	return nil
}

// Verify checks path against sum ("md5:HEX" or "sha256:HEX"); an empty
// sum verifies nothing.
func Verify(path, sum string) error {
	if sum == "" {
		return nil
	}
	algo, want, err := splitSum(sum)
	if err != nil {
		return err
	}
	var h hash.Hash = sha256.New()
	if algo == "md5" {
		h = md5.New()
	}
	f, err := xio.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s %s does not match the published %s", algo, got, want)
	}
	return nil
}

// SHA256 returns the hex sha256 of a file.
func SHA256(path string) (string, error) { return xio.SHA256File(path) }

func findInMirror(mirror, rel string) (string, error) {
	for _, c := range []string{filepath.Join(mirror, filepath.FromSlash(rel)), filepath.Join(mirror, filepath.Base(rel))} {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, nil
		}
	}
	return "", fmt.Errorf("mirror %s has neither %s nor %s", mirror, rel, filepath.Base(rel))
}

// fromMirrorLayout copies a dataset that the mirror holds in a layout the
// loaders read (an extracted folder rather than the published archive),
// keeping its path relative to the mirror. It reports whether it did.
// Nothing outside the mirror is read: the dataset's folder and every file
// in it, symbolic links resolved, must lie inside the mirror. Files the
// catalog has checksums for (Layout) are verified before the copy is put
// in place; a copy already in place is verified too.
func fromMirrorLayout(a Artifact, root string, opt FetchOptions) (bool, error) {
	if a.Dataset == "" {
		return false, nil
	}
	for _, f := range a.Files {
		if _, err := findInMirror(opt.Mirror, f.Path); err == nil {
			return false, nil // the published files are there: copy those
		}
	}
	src, err := datasets.Locate(opt.Mirror, a.Dataset, datasets.Options{})
	if err != nil {
		return false, nil
	}
	rel, err := filepath.Rel(opt.Mirror, src)
	if err != nil || strings.HasPrefix(rel, "..") {
		return false, nil
	}
	mirror, err := filepath.EvalSymlinks(opt.Mirror)
	if err != nil {
		return false, err
	}
	dest := filepath.Join(root, rel)
	if _, err := os.Stat(dest); err == nil {
		n, err := verifyLayout(a, filepath.ToSlash(rel), dest)
		if err != nil {
			return true, fmt.Errorf("%s exists but %w; remove it to fetch again", dest, err)
		}
		opt.logf("%s: present, %s", dest, layoutVerdict(n))
		return true, nil
	}
	opt.logf("%s: copying from mirror %s (extracted layout)", dest, src)
	tmp := dest + ".part"
	os.RemoveAll(tmp)
	if err := copyTree(mirror, src, tmp); err != nil {
		os.RemoveAll(tmp)
		return true, err
	}
	n, err := verifyLayout(a, filepath.ToSlash(rel), tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return true, fmt.Errorf("mirror %s: %w; the copy was removed", src, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return true, err
	}
	opt.logf("%s: done, %s", dest, layoutVerdict(n))
	return true, nil
}

// verifyLayout checks the files of a.Layout under the dataset folder rel
// (copied to dir) against their checksums; absent ones are skipped. It
// returns how many it verified.
func verifyLayout(a Artifact, rel, dir string) (int, error) {
	n := 0
	for _, f := range a.Layout {
		sub, ok := strings.CutPrefix(f.Path, rel+"/")
		if !ok {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(sub))
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := Verify(p, f.Sum); err != nil {
			return n, fmt.Errorf("%s: %w", f.Path, err)
		}
		n++
	}
	return n, nil
}

func layoutVerdict(n int) string {
	if n == 0 {
		return "no checksum in the catalog for these files: not verified"
	}
	return fmt.Sprintf("%d files verified against the catalog's checksums", n)
}

func copyFile(ctx context.Context, src, dst string, progressW io.Writer) error {
	in, err := xio.OpenRegular(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, _ := in.Stat()
	out, err := xio.OpenWrite(dst, os.O_TRUNC)
	if err != nil {
		return err
	}
	bar := progress.New(progressW, st.Size(), filepath.Base(src), true)
	_, err = io.Copy(out, bar.Reader(ctxReader{ctx, in}))
	bar.Finish()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// copyTree copies the file or folder src into dst. Symbolic links are
// followed only to files and folders inside mirror (one that leads
// outside is an error), and a folder is copied once however many links
// lead to it.
func copyTree(mirror, src, dst string) error {
	seen := map[string]bool{}
	var walk func(src, dst string) error
	walk = func(src, dst string) error {
		real, err := filepath.EvalSymlinks(src)
		if err != nil {
			return err
		}
		if r, err := filepath.Rel(mirror, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return fmt.Errorf("mirror: %s leads outside the mirror (to %s); not copied", src, real)
		}
		st, err := os.Stat(real)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return copyFile(context.Background(), real, dst, nil)
		}
		if seen[real] {
			return nil
		}
		seen[real] = true
		ents, err := os.ReadDir(real)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dst, 0o777); err != nil {
			return err
		}
		for _, e := range ents {
			if err := walk(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(src, dst)
}

// unpack extracts the artifact's archive into its Dir, once: a marker file
// records a finished extraction. While it writes, the folder holds
// datasets.Unpacking, which the loader refuses to read past: an
// extraction refused, out of space or killed leaves a partial tree that
// no run takes for the corpus, and the next Fetch unpacks it again.
func unpack(ctx context.Context, a Artifact, root string, opt FetchOptions) error {
	archive := a.Files[0].Local(root)
	dir := filepath.Join(root, filepath.FromSlash(a.Dir))
	marker := filepath.Join(dir, ".xp-unpacked-"+filepath.Base(archive))
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	opt.logf("%s: unpacking into %s", archive, dir)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	unpacking := filepath.Join(dir, datasets.Unpacking)
	if err := xio.WriteFileAtomic(unpacking, []byte(filepath.Base(archive)+"\n")); err != nil {
		return err
	}
	maxBytes, maxMembers := cmp.Or(opt.MaxUnpacked, DefaultMaxUnpacked), cmp.Or(opt.MaxMembers, DefaultMaxMembers)
	var unpacked int64
	members := 0
	write := func(name string, mode fs.FileMode, r io.Reader) error {
		name = strings.TrimPrefix(filepath.ToSlash(name), a.StripPrefix)
		if name == "" || strings.HasSuffix(name, "/") {
			return nil
		}
		clean := filepath.Clean(filepath.FromSlash(name))
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return fmt.Errorf("member %q escapes the target folder", name)
		}
		if b := filepath.Base(clean); strings.HasPrefix(b, ".xp-unpacked-") || b == datasets.Unpacking {
			return fmt.Errorf("member %q would pass for xp's mark of an extraction", name)
		}
		if members++; members > maxMembers {
			return fmt.Errorf("more than %d files: not unpacked further", maxMembers)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		target := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
			return err
		}
		tmp, err := xio.CreateTemp(filepath.Dir(target), filepath.Base(target))
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name()) // a no-op once renamed
		n, err := io.Copy(tmp, io.LimitReader(r, maxBytes-unpacked+1))
		unpacked += n
		if err == nil && unpacked > maxBytes {
			err = fmt.Errorf("more than %d bytes unpacked: not unpacked further", maxBytes)
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), mode.Perm()|0o644)
		}
		if err != nil {
			return err
		}
		return os.Rename(tmp.Name(), target)
	}
	var err error
	switch {
	case strings.HasSuffix(archive, ".zip"):
		err = unzip(archive, write)
	case strings.HasSuffix(archive, ".tar.gz") || strings.HasSuffix(archive, ".tgz"):
		err = untar(archive, write)
	default:
		err = fmt.Errorf("%s: not a .zip or .tar.gz", archive)
	}
	if err != nil {
		return err
	}
	if err := xio.WriteFileAtomic(marker, []byte(a.Files[0].Sum+"\n")); err != nil {
		return err
	}
	return os.Remove(unpacking)
}

func unzip(path string, write func(string, fs.FileMode, io.Reader) error) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !f.Mode().IsRegular() || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue // folders, and links (written, they would be files holding a path)
		}
		r, err := f.Open()
		if err != nil {
			return err
		}
		err = write(f.Name, f.Mode(), r)
		r.Close()
		if err != nil {
			return fmt.Errorf("%s#%s: %w", path, f.Name, err)
		}
	}
	return nil
}

func untar(path string, write func(string, fs.FileMode, io.Reader) error) error {
	rc, _, err := xio.Open(path)
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := write(h.Name, h.FileInfo().Mode(), tr); err != nil {
			return fmt.Errorf("%s#%s: %w", path, h.Name, err)
		}
	}
}
