package events

import "math/bits"

// The scanners and the encoder of JSON strings spend most of their time on plain bytes:
// printable ASCII other than the quote and the backslash, which a string holds as they are
// (plainByte). plainUntil moves past them eight at a time.

// Eight copies of a byte, and the high bit of each of eight bytes.
const (
	eachByte  = 0x0101010101010101
	highBits  = 0x8080808080808080
	quotes    = '"' * eachByte
	backslash = '\\' * eachByte
	space     = ' ' * eachByte
)

// notPlain has the high bit of the lowest byte of x that is not plain set, and none below it
// (bytes above it may be marked too). x holds eight bytes of a string, the first in its low
// byte. A byte is not plain when it is 0x80 or more, below 0x20, a quote or a backslash: the
// first by its own high bit, the others by the bit that subtracting one from each byte of
// x^quotes or x^backslash, or ' ' from each byte of x, borrows into it (which only a byte
// that matches can start, hence nothing below the first is marked).
func notPlain(x uint64) uint64 {
	zeroAt := func(y uint64) uint64 { return (y - eachByte) &^ y }
	return (x | zeroAt(x^quotes) | zeroAt(x^backslash) | (x-space)&^x) & highBits
}

// plainUntil returns the index of the first byte of s at or after i that is not plain (see
// plainByte), or len(s) when there is none.
func plainUntil[S ~string | ~[]byte](s S, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8] // one bounds check for the eight loads, which the compiler makes one
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if m := notPlain(x); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s) && plainByte[s[i]]; i++ {
	}
	return i
}
