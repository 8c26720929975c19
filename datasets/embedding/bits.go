package embedding

import (
	"encoding/binary"
	"math"
	"unsafe"
)

func mathFloat32bits(f float32) uint32 { return math.Float32bits(f) }

func float32frombytes(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
