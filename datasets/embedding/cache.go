package embedding

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/xp-nlp/xp/internal/xio"
)

// The cache file: magic, a little-endian uint32 header length, the JSON
// header, the words (each followed by '\n'), zero padding to a 64-byte
// boundary, then Len×Dim little-endian float32s. The header records the
// source's path, size, modification time and sha256, and a CRC-32C of
// everything after the header; a cache is used only when the source's
// path, size and modification time match and the CRC holds.
const cacheMagic = "XPVEC01\n"

var errNoCache = errors.New("no cache")

type cacheHeader struct {
	Source       string  `json:"source"`
	Size         int64   `json:"size"`
	ModTimeNS    int64   `json:"mtime_ns"`
	SourceSHA256 string  `json:"source_sha256"`
	Format       string  `json:"format"`
	Len          int     `json:"len"`
	Dim          int     `json:"dim"`
	WordBytes    int     `json:"word_bytes"`
	Skipped      Skipped `json:"skipped"`
	CRC32C       uint32  `json:"crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// cachePath names the cache of a source by its absolute path.
func cachePath(dir, source string) string {
	abs, err := filepath.Abs(source)
	if err != nil {
		abs = source
	}
	sum := sha256.Sum256([]byte(abs))
	base := strings.NewReplacer(".gz", "", ".zip", "", ".txt", "", ".vec", "", ".bin", "", "#", "-").Replace(filepath.Base(source))
	return filepath.Join(dir, base+"-"+hex.EncodeToString(sum[:8])+".xpvec")
}

// readCache reads the cache of source, whose file's state is st. A
// cache whose source has the recorded size but another mtime (data copied
// to a node's scratch, a fresh checkout of the data) is read when the
// file's sha256 still equals the recorded one; refresh then says the
// cache should be written again with the new mtime.
func readCache(dir, source string, st fs.FileInfo) (e *Embedding, refresh bool, err error) {
	path := cachePath(dir, source)
	raw, err := xio.ReadFileMax(path, xio.MaxCache)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, errNoCache
	}
	if err != nil {
		return nil, false, err
	}
	h, body, err := parseHeader(raw)
	if err == nil {
		refresh, err = stale(h, source, st)
	}
	if err == nil {
		e, err = decodeBody(h, body, source)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return e, refresh, nil
}

// parseHeader splits a cache file into its header and body.
func parseHeader(raw []byte) (h cacheHeader, body []byte, err error) {
	if len(raw) < len(cacheMagic)+4 || string(raw[:len(cacheMagic)]) != cacheMagic {
		return h, nil, errors.New("not an xp embedding cache")
	}
	hlen := int(binary.LittleEndian.Uint32(raw[len(cacheMagic):]))
	off := len(cacheMagic) + 4
	if hlen > len(raw)-off {
		return h, nil, errors.New("truncated header")
	}
	if err := json.Unmarshal(raw[off:off+hlen], &h); err != nil {
		return h, nil, errors.New("header: " + err.Error())
	}
	return h, raw[off+hlen:], nil
}

// stale says whether the source (state st) is not the one the cache of
// header h was written from (an error), or is, under a new mtime
// (refresh: its size and sha256 are the recorded ones).
func stale(h cacheHeader, source string, st fs.FileInfo) (refresh bool, err error) {
	errStale := errors.New("stale: source changed since the cache was written")
	if h.Size != st.Size() {
		return false, errStale
	}
	if h.ModTimeNS == st.ModTime().UnixNano() {
		return false, nil
	}
	file, _ := xio.SplitMember(source)
	sum, err := xio.SHA256File(file)
	if err != nil {
		return false, err
	}
	if sum != h.SourceSHA256 {
		return false, errStale
	}
	return true, nil
}

// decodeBody checks a cache's body against its header and returns the
// embedding it holds (its matrix the body's own bytes where aligned).
func decodeBody(h cacheHeader, body []byte, source string) (*Embedding, error) {
	bad := errors.New
	data := align(h.WordBytes)
	if len(body) != data+4*h.Len*h.Dim || h.Len <= 0 || h.Dim <= 0 {
		return nil, bad("truncated")
	}
	if crc32.Checksum(body, castagnoli) != h.CRC32C {
		return nil, bad("checksum mismatch")
	}
	e := &Embedding{
		Dim: h.Dim, Source: source, SourceSHA256: h.SourceSHA256, Format: h.Format, Skipped: h.Skipped,
		Words: make([]string, 0, h.Len),
	}
	// One string holds every word; the Words slices point into it.
	all := string(body[:h.WordBytes])
	for len(all) > 0 {
		i := strings.IndexByte(all, '\n')
		e.Words = append(e.Words, all[:i])
		all = all[i+1:]
	}
	if len(e.Words) != h.Len {
		return nil, bad("word count mismatch")
	}
	floats := body[data:]
	if uintptr(unsafe.Pointer(unsafe.SliceData(floats)))%4 != 0 || !littleEndian() {
		e.Data = make([]float32, h.Len*h.Dim)
		for i := range e.Data {
			e.Data[i] = float32frombytes(floats[4*i:])
		}
	} else {
		// The file's buffer becomes the matrix: no copy.
		e.Data = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(floats))), h.Len*h.Dim)
	}
	return e, nil
}

func writeCache(dir, source string, st fs.FileInfo, e *Embedding) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	var words bytes.Buffer
	for _, w := range e.Words {
		words.WriteString(w)
		words.WriteByte('\n')
	}
	body := make([]byte, align(words.Len())+4*len(e.Data))
	copy(body, words.Bytes())
	floats := body[align(words.Len()):]
	for i, f := range e.Data {
		binary.LittleEndian.PutUint32(floats[4*i:], mathFloat32bits(f))
	}
	abs, _ := filepath.Abs(source)
	h := cacheHeader{
		Source: abs, Size: st.Size(), ModTimeNS: st.ModTime().UnixNano(), SourceSHA256: e.SourceSHA256,
		Format: e.Format, Len: e.Len(), Dim: e.Dim, WordBytes: words.Len(), Skipped: e.Skipped,
		CRC32C: crc32.Checksum(body, castagnoli),
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return err
	}
	// Pad the header so that the float block is 64-byte aligned in the file.
	pre := len(cacheMagic) + 4 + len(hj)
	if r := (pre + align(words.Len())) % 64; r != 0 {
		hj = append(hj, bytes.Repeat([]byte{' '}, 64-r)...)
	}
	out := make([]byte, 0, len(cacheMagic)+4+len(hj)+len(body))
	out = append(out, cacheMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(hj)))
	out = append(out, hj...)
	out = append(out, body...)
	return xio.WriteFileAtomic(cachePath(dir, source), out)
}

// align rounds n up to a multiple of 64.
func align(n int) int { return (n + 63) &^ 63 }
