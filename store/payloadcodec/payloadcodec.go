// Package payloadcodec is the form in which the stores keep an event's record and a blob: the
// canonical bytes themselves, or those bytes compressed with zstd, marked by a one-byte header.
//
// Both forms coexist in one log. A record written before compression existed is its canonical
// encoding, whose first byte is the events package's format byte (1), and reads as it always
// did; a compressed record starts with Tag, followed by a zstd frame without its four magic
// bytes. The frame names the dictionary it was compressed with (see Dictionaries), or none (id 0)
// for a value of entropyMin bytes or more, so a later dictionary never makes an earlier record
// unreadable. Encode compresses only when that saves
// bytes: a record compression would not shrink is kept as it is.
//
// Compress and Decompress are the frame alone, without Tag, for a store that keeps records in a
// form of its own and marks them itself.
//
// What a record means is not this package's concern, and neither is its integrity: the stores
// hash and check the canonical bytes Decode returns, so the hash chain, export, import and
// verify are the same whichever form a record is kept in.
package payloadcodec

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Tag is the first byte of a compressed value. No canonical event encoding starts with it (their
// first byte is the events package's format number, 1 today), and a blob that starts with it
// is told apart by its sum (see Decode).
const Tag = 0xFE

// magic is the zstd frame's magic number, which a stored value leaves out.
var magic = []byte{0x28, 0xB5, 0x2F, 0xFD}

// minSize is the smallest value worth trying to compress: below it the frame's header costs as
// much as compression saves.
const minSize = 48

// entropyMin is the smallest value whose literals are Huffman-coded, and which is compressed
// without the dictionary (see newEncoder). Below it, building the Huffman table costs more than
// it saves: on the recorded mix, values under 4 KB coded without Huffman tables keep the same bytes (243.4 against 243.3 a record) in half the time (5.9 against 11.9 µs
// a record); above it, a decision's literals are worth coding (253 bytes a record when no
// value is).
const entropyMin = 4 << 10

// maxDecoded bounds what one value may decode to, so that a damaged frame header cannot make a
// reader allocate without limit. A NATS message holds at most a few MiB and an event spilled
// out of one, like a blob, is a rule file or a record, far below this.
const maxDecoded = 256 << 20

// ErrCorrupt is returned when a compressed value does not decode.
var ErrCorrupt = errors.New("the compressed value does not decode")

// ErrUnknownDictionary is returned for a value compressed with a dictionary this version does
// not have: a newer tasklog wrote it.
var ErrUnknownDictionary = errors.New("the value was compressed with a dictionary this version of tasklog does not have; read it with a newer replay")

// The encoders and the decoder are made when first used, each on its own: a process that
// only appends small records (a hook's) makes the encoder of those alone, one that only reads
// the decoder alone.
var (
	encoder      = sync.OnceValues(func() (*zstd.Encoder, error) { return newEncoder(true) })
	smallEncoder = sync.OnceValues(func() (*zstd.Encoder, error) { return newEncoder(false) })
	decoder      = sync.OnceValues(newDecoder)
	// scratch holds a frame with its magic put back, for the decoder.
	scratch = sync.Pool{New: func() any { return new([]byte) }}
)

// newEncoder makes the encoder of values of entropyMin bytes or more (large: decisions, rules
// snapshots) or of smaller ones. A large value's literals are Huffman-coded, and it is
// compressed without the dictionary: zstd's assembly decoder (amd64, arm64) leaves a frame that
// names one to its portable code, and decompresses the mix's large records in about 60% of the
// time without it, for 5% more bytes (BenchmarkDecodeDictionary, BenchmarkEncodeDictionary). A
// small value keeps the dictionary, which saves about a fifth of its bytes.
func newEncoder(large bool) (*zstd.Encoder, error) {
	if large {
		return newEncoderWith(true, nil)
	}
	return newEncoderWith(false, current())
}

// newEncoderWith makes an encoder that Huffman-codes literals when entropy is set, with the
// dictionary d, or none when d is nil.
//
// The dictionary costs time at every frame: the encoder puts its match table back to the
// dictionary's (256 KB) before each one, most of the time of a small record
// (BenchmarkEncodeDictionary). It is kept for values under entropyMin, for the bytes it saves.
func newEncoderWith(entropy bool, d *Dictionary) (*zstd.Encoder, error) {
	opts := []zstd.EOption{
		// On the recorded mix the fastest level keeps 0.5% more bytes than the default
		// (243 against 242 a record) in two thirds of its time (13 against 19-23 µs a
		// record), a cost every append, decision and import pays; the better level saves 2%
		// more than the default and takes two and a half times as long.
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		// The stores check what a value decodes to (an event's hash, a blob's sum): the
		// frame's own checksum would cost four bytes a value for nothing more.
		zstd.WithEncoderCRC(false),
		zstd.WithEncoderConcurrency(1),
		zstd.WithSingleSegment(true),
		// The window is what an encoder allocates and clears when it is made: at the default
		// 8 MiB that took 1.8 ms and 5 MB, paid by every hook process that appends. Records
		// are far smaller (a full decision is under 100 KB), and on the recorded mix 128 KiB
		// keeps the same bytes; a larger value only finds no match further back than that.
		zstd.WithWindowSize(windowSize),
		zstd.WithNoEntropyCompression(!entropy),
	}
	if d != nil {
		opts = append(opts, zstd.WithEncoderDictRaw(d.ID, d.Content))
	}
	return zstd.NewWriter(nil, opts...)
}

// windowSize is how far back an encoder looks for a match.
const windowSize = 128 << 10

func newDecoder() (*zstd.Decoder, error) {
	opts := []zstd.DOption{zstd.WithDecoderMaxMemory(maxDecoded), zstd.WithDecoderConcurrency(0)}
	for _, d := range Dictionaries {
		opts = append(opts, zstd.WithDecoderDictRaw(d.ID, d.Content))
	}
	return zstd.NewReader(nil, opts...)
}

// Encode appends the stored form of canonical to dst: canonical compressed behind Tag when that
// is shorter, else canonical as it is.
func Encode(dst, canonical []byte) []byte {
	start := len(dst)
	dst, ok := Compress(append(dst, Tag), canonical)
	if !ok || len(dst)-start >= len(canonical) {
		return append(dst[:start], canonical...)
	}
	return dst
}

// Compress appends to dst src compressed as a zstd frame without its magic number and reports
// whether it did: it does not (and returns dst as it was) when src is too short to be worth it
// or the frame would not be shorter than src. Decompress reads the frame back.
func Compress(dst, src []byte) ([]byte, bool) {
	if len(src) < minSize {
		return dst, false
	}
	newEnc := encoder
	if len(src) < entropyMin {
		newEnc = smallEncoder
	}
	enc, err := newEnc()
	if err != nil {
		// Cannot happen with the options above; a store that cannot compress stores as is.
		return dst, false
	}
	start := len(dst)
	// The frame is written, then its magic is cut out.
	dst = enc.EncodeAll(src, dst)
	if len(dst)-start-len(magic) >= len(src) {
		return dst[:start], false
	}
	copy(dst[start:], dst[start+len(magic):])
	return dst[:len(dst)-len(magic)], true
}

// IsCompressed reports whether a stored value is in the compressed form. A blob of any content
// may start with Tag too: a store of blobs tells the two apart by the content's sum.
func IsCompressed(stored []byte) bool { return len(stored) > 0 && stored[0] == Tag }

// Decode appends the canonical bytes of a stored value to dst: the value itself when it is not
// compressed. A compressed value that does not decode is ErrCorrupt; one compressed with a
// dictionary this version lacks is ErrUnknownDictionary.
func Decode(dst, stored []byte) ([]byte, error) {
	if !IsCompressed(stored) {
		return append(dst, stored...), nil
	}
	return Decompress(dst, stored[1:])
}

// Decompress appends to dst what a frame written by Compress decodes to. A frame that does not
// decode is ErrCorrupt; one compressed with a dictionary this version lacks is
// ErrUnknownDictionary.
func Decompress(dst, frame []byte) ([]byte, error) {
	dec, err := decoder()
	if err != nil {
		return dst, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	buf := scratch.Get().(*[]byte)
	whole := append(append((*buf)[:0], magic...), frame...)
	defer func() { *buf = whole[:0]; scratch.Put(buf) }()
	var h zstd.Header
	if err := h.Decode(whole); err != nil {
		return dst, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if h.HasFCS {
		if h.FrameContentSize > maxDecoded {
			return dst, fmt.Errorf("%w: it claims %d bytes", ErrCorrupt, h.FrameContentSize)
		}
		// DecodeAll grows a short dst to the exact size, copying it: a caller appending many
		// values to one buffer would copy it once per value.
		dst = slices.Grow(dst, int(h.FrameContentSize))
	}
	out, err := dec.DecodeAll(whole, dst)
	if err != nil {
		if errors.Is(err, zstd.ErrUnknownDictionary) {
			return dst, fmt.Errorf("%w (dictionary %d)", ErrUnknownDictionary, h.DictionaryID)
		}
		return dst, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return out, nil
}
