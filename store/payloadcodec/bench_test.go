package payloadcodec

import (
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/internal/mix"
)

// mixRecords are the canonical encodings of 5,000 events of the realistic mix, sealed in a chain.
func mixRecords(b *testing.B) [][]byte {
	evs, _ := mix.Realistic(b, 5_000)
	task := uuid.New()
	var prev events.Hash
	out := make([][]byte, len(evs))
	for i := range evs {
		ev := evs[i]
		ev.Task, ev.Seq = task, uint64(i+1)
		ev.Seal(prev)
		prev = ev.Hash
		out[i] = ev.AppendBinary(nil)
	}
	return out
}

// BenchmarkEncode compresses the records of the realistic mix one at a time, as appends do,
// and reports the bytes kept per record.
func BenchmarkEncode(b *testing.B) {
	recs := mixRecords(b)
	var dst []byte
	kept := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		dst = Encode(dst[:0], recs[i%len(recs)])
		kept += len(dst)
	}
	b.ReportMetric(float64(kept)/float64(b.N), "B/record")
}

// BenchmarkDecode decompresses them one at a time, as reads do.
func BenchmarkDecode(b *testing.B) {
	recs := mixRecords(b)
	stored := make([][]byte, len(recs))
	for i, r := range recs {
		stored[i] = Encode(nil, r)
	}
	var dst []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var err error
		if dst, err = Decode(dst[:0], stored[i%len(stored)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstUse is what a process pays the first time it compresses a small record, a
// large one (a decision), and decompresses one: making the encoder or decoder, then the value.
// A hook process without a server pays the first once for each hook.
func BenchmarkFirstUse(b *testing.B) {
	recs := mixRecords(b)
	var small, large []byte
	for _, r := range recs {
		switch {
		case small == nil && len(r) < entropyMin:
			small = r
		case large == nil && len(r) >= entropyMin:
			large = r
		}
	}
	for _, c := range []struct {
		name  string
		large bool
		rec   []byte
	}{{"encode-small", false, small}, {"encode-large", true, large}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				enc, err := newEncoder(c.large)
				if err != nil {
					b.Fatal(err)
				}
				enc.EncodeAll(c.rec, nil)
			}
		})
	}
	stored := Encode(nil, small)
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			dec, err := newDecoder()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := dec.DecodeAll(append(append([]byte(nil), magic...), stored[1:]...), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// sizeClass is the records of the mix from min bytes up to, but not including, to.
type sizeClass struct {
	name    string
	min, to int
}

// eachDictionary runs f as a sub-benchmark for every size class and with and without the
// dictionary, handing it the mix's records of that class (of minSize bytes or more) and the
// encoder of that class with or without it: a class lies wholly on one side of entropyMin, so
// one encoder serves it, the one Compress picks there but for the dictionary. store says
// whether that encoder is the store's own for the class.
func eachDictionary(b *testing.B, classes []sizeClass, f func(b *testing.B, in [][]byte, enc *zstd.Encoder, store bool)) {
	recs := mixRecords(b)
	for _, size := range classes {
		var in [][]byte
		for _, r := range recs {
			if len(r) >= max(size.min, minSize) && len(r) < size.to {
				in = append(in, r)
			}
		}
		for _, dict := range []*Dictionary{current(), nil} {
			name := size.name + "/dictionary"
			if dict == nil {
				name = size.name + "/none"
			}
			b.Run(name, func(b *testing.B) {
				enc, err := newEncoderWith(size.min >= entropyMin, dict)
				if err != nil {
					b.Fatal(err)
				}
				f(b, in, enc, (dict != nil) == (size.min < entropyMin))
				b.ReportMetric(float64(len(in)), "records")
			})
		}
	}
}

// BenchmarkEncodeDictionary compresses the records of the realistic mix one at a time with and
// without the dictionary, by the records' size (the store's encoders use it under entropyMin), and
// reports the bytes a store keeps per record: the frame without its magic number, as Compress
// keeps it, or the record as it is when that is not shorter.
func BenchmarkEncodeDictionary(b *testing.B) {
	classes := []sizeClass{{"under-256B", 0, 256}, {"256B-1KB", 256, 1 << 10}, {"1-4KB", 1 << 10, entropyMin}, {"4KB-up", entropyMin, 1 << 30}}
	eachDictionary(b, classes, func(b *testing.B, in [][]byte, enc *zstd.Encoder, store bool) {
		if store {
			// The store's encoder for these records: it keeps what Compress keeps.
			for _, r := range in {
				kept, ok := Compress(nil, r)
				if want := keptOf(enc.EncodeAll(r, nil), r); ok && len(kept) != want || !ok && want != len(r) {
					b.Fatalf("a %d-byte record: Compress keeps %d bytes (compressed %v), the benchmark counts %d", len(r), len(kept), ok, want)
				}
			}
		}
		var dst []byte
		kept := 0
		for i := 0; b.Loop(); i++ {
			r := in[i%len(in)]
			dst = enc.EncodeAll(r, dst[:0])
			kept += keptOf(dst, r)
		}
		b.ReportMetric(float64(kept)/float64(b.N), "B/record")
	})
}

// BenchmarkDecodeDictionary decompresses the records of the realistic mix one at a time,
// compressed with and without the dictionary, by the records' size, as reads do: the decoder
// takes its assembly path only for a frame that names no dictionary.
func BenchmarkDecodeDictionary(b *testing.B) {
	classes := []sizeClass{{"under-4KB", 0, entropyMin}, {"4KB-up", entropyMin, 1 << 30}}
	eachDictionary(b, classes, func(b *testing.B, in [][]byte, enc *zstd.Encoder, _ bool) {
		frames := make([][]byte, len(in))
		raw := 0
		for i, r := range in {
			frames[i] = enc.EncodeAll(r, nil)[len(magic):]
			raw += len(r)
		}
		var dst []byte
		var err error
		b.SetBytes(int64(raw / len(frames)))
		for i := 0; b.Loop(); i++ {
			if dst, err = Decompress(dst[:0], frames[i%len(frames)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// keptOf is how many bytes a store keeps of record r whose zstd frame is frame: the frame
// without its magic number, or r as it is when that is not shorter.
func keptOf(frame, r []byte) int { return min(len(frame)-len(magic), len(r)) }
