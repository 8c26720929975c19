package hf

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/xp-nlp/xp/internal/jsondup"
	"github.com/xp-nlp/xp/internal/xio"
)

// MaxHeader bounds a safetensors header (the format's own reference
// reader refuses past 100 MB).
const MaxHeader = 100 << 20

// TensorInfo is one tensor of a safetensors file: its element type, its
// shape and where its bytes lie in the data section.
type TensorInfo struct {
	Name  string
	DType string // F32, F16, BF16, F64, I64, I32, …
	Shape []int64
	// Begin and End are byte offsets into the data section.
	Begin, End int64
}

// Elements is the product of the shape.
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

var dtypeSize = map[string]int64{"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}

// Safetensors is an open safetensors file whose header was checked
// against the file: every tensor's bytes lie inside the file, match its
// shape and type, and overlap no other's.
type Safetensors struct {
	Path     string
	Tensors  map[string]TensorInfo
	Metadata map[string]string
	f        *os.File
	data     int64 // where the data section starts
}

// OpenSafetensors opens path and checks its header (8-byte little-endian
// length, then that much JSON). It reads no tensor yet.
func OpenSafetensors(path string) (*Safetensors, error) {
	f, err := xio.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	st, err := parseSafetensors(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return st, nil
}

// parseSafetensors reads and checks the header of f.
func parseSafetensors(f *os.File, path string) (*Safetensors, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: not a safetensors file xp can read: %s", path, fmt.Sprintf(format, a...))
	}
	var n [8]byte
	if _, err := io.ReadFull(f, n[:]); err != nil {
		return nil, bad("%d bytes, shorter than the 8-byte header length", size)
	}
	hlen := binary.LittleEndian.Uint64(n[:])
	switch {
	case hlen > MaxHeader:
		return nil, bad("header of %d bytes, at most %d", hlen, MaxHeader)
	case int64(hlen) > size-8:
		return nil, bad("header of %d bytes, but the file holds %d after its length (truncated?)", hlen, size-8)
	}
	head := make([]byte, hlen)
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, bad("reading the header: %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(head, &raw); err != nil {
		return nil, bad("header is not a JSON object: %v", err)
	}
	if name, dup, _ := jsondup.First(head); dup {
		// JSON keeps the last: the tensor read would be the second entry.
		return nil, bad("%q is named twice in the header", name)
	}
	st := &Safetensors{Path: path, Tensors: map[string]TensorInfo{}, f: f, data: 8 + int64(hlen)}
	dataLen := size - st.data
	for name, v := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(v, &st.Metadata); err != nil {
				return nil, bad("__metadata__ is not an object of strings: %v", err)
			}
			continue
		}
		var t struct {
			DType   string  `json:"dtype"`
			Shape   []int64 `json:"shape"`
			Offsets []int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(v, &t); err != nil {
			return nil, bad("tensor %q: %v", name, err)
		}
		es, ok := dtypeSize[t.DType]
		if !ok {
			return nil, bad("tensor %q: unknown dtype %q", name, t.DType)
		}
		if len(t.Offsets) != 2 || t.Offsets[0] < 0 || t.Offsets[1] < t.Offsets[0] {
			return nil, bad("tensor %q: data_offsets %v, want [begin, end] with 0 ≤ begin ≤ end", name, t.Offsets)
		}
		if t.Offsets[1] > dataLen {
			return nil, bad("tensor %q ends at byte %d of the data, which holds %d (truncated?)", name, t.Offsets[1], dataLen)
		}
		elems := int64(1)
		for _, d := range t.Shape {
			if d < 0 || (d > 0 && elems > math.MaxInt64/d) {
				return nil, bad("tensor %q: shape %v", name, t.Shape)
			}
			elems *= d
		}
		if elems > (math.MaxInt64/es) || elems*es != t.Offsets[1]-t.Offsets[0] {
			return nil, bad("tensor %q: shape %v of %s is %d bytes, its offsets span %d", name, t.Shape, t.DType, elems*es, t.Offsets[1]-t.Offsets[0])
		}
		st.Tensors[name] = TensorInfo{Name: name, DType: t.DType, Shape: t.Shape, Begin: t.Offsets[0], End: t.Offsets[1]}
	}
	ts := make([]TensorInfo, 0, len(st.Tensors))
	for _, t := range st.Tensors {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		return ts[i].Begin < ts[j].Begin || ts[i].Begin == ts[j].Begin && ts[i].End < ts[j].End
	})
	for i := 1; i < len(ts); i++ {
		if ts[i].Begin < ts[i-1].End {
			return nil, bad("tensors %q and %q overlap", ts[i-1].Name, ts[i].Name)
		}
	}
	return st, nil
}

// Close closes the file.
func (s *Safetensors) Close() error { return s.f.Close() }

// Names lists the tensors' names, sorted.
func (s *Safetensors) Names() []string {
	out := make([]string, 0, len(s.Tensors))
	for n := range s.Tensors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ErrNoTensor is returned for a tensor the file does not hold.
var ErrNoTensor = errors.New("no such tensor")

// Float32 reads a floating-point tensor as float32 values (F16 and BF16
// widened exactly, F64 rounded), in row-major order.
func (s *Safetensors) Float32(name string) ([]float32, []int64, error) {
	t, ok := s.Tensors[name]
	if !ok {
		return nil, nil, fmt.Errorf("%s: %q: %w", s.Path, name, ErrNoTensor)
	}
	b := make([]byte, t.End-t.Begin)
	if _, err := s.f.ReadAt(b, s.data+t.Begin); err != nil {
		return nil, nil, fmt.Errorf("%s: tensor %q: %w", s.Path, name, err)
	}
	n := t.Elements()
	out := make([]float32, n)
	switch t.DType {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case "F64":
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	case "BF16":
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	case "F16":
		for i := range out {
			out[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
		}
	default:
		return nil, nil, fmt.Errorf("%s: tensor %q is %s, not a floating-point type", s.Path, name, t.DType)
	}
	return out, t.Shape, nil
}

// halfToFloat widens an IEEE 754 binary16 value exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac × 2^-24
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// WriteSafetensors writes tensors (name → values and shape) as an F32
// safetensors file to w, names sorted: what tests and tools need to make
// a checkpoint in the layout users bring.
func WriteSafetensors(w io.Writer, tensors map[string]Tensor32, metadata map[string]string) error {
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		if n == "__metadata__" || strings.TrimSpace(n) == "" {
			return fmt.Errorf("safetensors: tensor name %q", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	head := map[string]any{}
	if len(metadata) > 0 {
		head["__metadata__"] = metadata
	}
	var off int64
	for _, n := range names {
		t := tensors[n]
		elems := int64(1)
		for _, d := range t.Shape {
			elems *= d
		}
		if elems != int64(len(t.Data)) {
			return fmt.Errorf("safetensors: tensor %q: shape %v holds %d values, %d given", n, t.Shape, elems, len(t.Data))
		}
		head[n] = map[string]any{"dtype": "F32", "shape": t.Shape, "data_offsets": []int64{off, off + 4*elems}}
		off += 4 * elems
	}
	hj, err := json.Marshal(head)
	if err != nil {
		return err
	}
	for len(hj)%8 != 0 { // the format pads the header with spaces to 8 bytes
		hj = append(hj, ' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(hj)))
	if _, err := w.Write(append(n[:], hj...)); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, name := range names {
		for _, v := range tensors[name].Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) >= 1<<16 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

// Tensor32 is a float32 tensor to write.
type Tensor32 struct {
	Shape []int64
	Data  []float32
}
