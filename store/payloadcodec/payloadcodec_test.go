package payloadcodec

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestEncodeDecode(t *testing.T) {
	noise := make([]byte, 400)
	rand.Read(noise)
	tests := []struct {
		name       string
		canonical  []byte
		compressed bool
	}{
		{"empty", nil, false},
		{"tiny", []byte{1, 0, 'a'}, false},
		{"json that repeats", []byte(strings.Repeat(`{"tool":"Read","params":{"file_path":"/home/dev/shop/src/a.ts"}}`, 20)), true},
		{"a record of the events package", append([]byte{1, 1}, []byte(`{"tool":"Bash","id":"toolu_1","params":{"command":"go test ./...","description":"Run the tests"}}`)...), true},
		{"noise", noise, false},
		{"noise starting with the tag", append([]byte{Tag}, noise...), false},
		// A decision's size: its literals are Huffman-coded.
		{"json past entropyMin", bigJSON(2 * entropyMin), true},
		// Larger than the encoder's window: matches further back are not found, but the value
		// is whole.
		{"json past the window", bigJSON(3 * windowSize), true},
		{"json of some MiB", bigJSON(3 << 20), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stored := Encode([]byte("prefix"), tt.canonical)
			if !bytes.HasPrefix(stored, []byte("prefix")) {
				t.Fatalf("Encode did not append to dst")
			}
			stored = stored[len("prefix"):]
			if got := len(stored) < len(tt.canonical); got != tt.compressed {
				t.Errorf("%d bytes stored for %d: compressed %v, want %v", len(stored), len(tt.canonical), got, tt.compressed)
			}
			if !tt.compressed {
				if !bytes.Equal(stored, tt.canonical) {
					t.Fatalf("a value kept as it is was changed")
				}
				return
			}
			if !IsCompressed(stored) {
				t.Fatalf("a compressed value does not start with the tag: %x", stored[:4])
			}
			got, err := Decode([]byte("x"), stored)
			if err != nil || !bytes.Equal(got, append([]byte("x"), tt.canonical...)) {
				t.Fatalf("Decode = %q, %v; want the canonical bytes appended", got, err)
			}
		})
	}
}

// Records written before compression start with the events package's format byte, not the
// tag: Decode hands them back as they are.
func TestDecodeOldRecord(t *testing.T) {
	old := []byte{1, 1, 0x33, 0x33, 'o', 'l', 'd'}
	got, err := Decode(nil, old)
	if err != nil || !bytes.Equal(got, old) {
		t.Fatalf("Decode(old) = %x, %v", got, err)
	}
}

func TestDecodeDamaged(t *testing.T) {
	canonical := []byte(strings.Repeat(`{"path":"apps/web/src/Button.tsx","op":"edit"}`, 30))
	stored := Encode(nil, canonical)
	tests := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"cut short", func(b []byte) []byte { return b[:len(b)/2] }},
		{"tag alone", func(b []byte) []byte { return b[:1] }},
		{"header overwritten", func(b []byte) []byte { b[1], b[2] = 0xFF, 0xFF; return b }},
		{"block type flipped", func(b []byte) []byte { b[len(b)/2] ^= 0xFF; b[len(b)/2+1] ^= 0xFF; b[4] ^= 0x06; return b }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.damage(bytes.Clone(stored))
			got, err := Decode(nil, b)
			if err == nil {
				// Without a checksum a damaged block may still decode: then to other bytes,
				// which the stores' hashes catch.
				if bytes.Equal(got, canonical) {
					t.Fatalf("a damaged value decoded to the original")
				}
				return
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode = %v, want ErrCorrupt", err)
			}
		})
	}
}

// A value compressed with a dictionary this version does not have says so, and which.
func TestDecodeUnknownDictionary(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDictRaw(99, []byte(strings.Repeat(`{"tool":"Read"}`, 10))),
		zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
	if err != nil {
		t.Fatal(err)
	}
	frame := enc.EncodeAll([]byte(strings.Repeat(`{"tool":"Read","id":"x"}`, 10)), nil)
	stored := append([]byte{Tag}, frame[len(magic):]...)
	_, err = Decode(nil, stored)
	if !errors.Is(err, ErrUnknownDictionary) || !strings.Contains(err.Error(), "dictionary 99") {
		t.Fatalf("Decode = %v, want ErrUnknownDictionary naming dictionary 99", err)
	}
}

// A value under entropyMin is compressed with the newest dictionary, a larger one (a decision)
// without one, which zstd's assembly decoder reads faster.
func TestEncodeNamesTheDictionary(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value []byte
		want  uint32
	}{
		{"a tool call", []byte(strings.Repeat(`{"tool":"Read","params":{"file_path":"x"}}`, 5)), current().ID},
		{"just under entropyMin", bigJSON(entropyMin)[:entropyMin-1], current().ID},
		{"entropyMin", bigJSON(entropyMin)[:entropyMin], 0},
		{"a decision's size", bigJSON(45 << 10), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stored := Encode(nil, tt.value)
			if !IsCompressed(stored) {
				t.Fatalf("a %d-byte value is stored as it is", len(tt.value))
			}
			var h zstd.Header
			if err := h.Decode(append(bytes.Clone(magic), stored[1:]...)); err != nil {
				t.Fatal(err)
			}
			if h.DictionaryID != tt.want {
				t.Fatalf("the frame of a %d-byte value names dictionary %d, want %d", len(tt.value), h.DictionaryID, tt.want)
			}
			back, err := Decode(nil, stored)
			if err != nil || !bytes.Equal(back, tt.value) {
				t.Fatalf("Decode = %d bytes, %v; want the %d bytes back", len(back), err, len(tt.value))
			}
		})
	}
}

// A decision compressed with dictionary 1, as versions before records of entropyMin bytes went
// without it wrote one, reads back whole.
func TestDecodeLargeValueOfDictionary1(t *testing.T) {
	enc, err := newEncoderWith(true, &Dictionaries[0])
	if err != nil {
		t.Fatal(err)
	}
	value := bigJSON(45 << 10)
	frame := enc.EncodeAll(value, nil)
	var h zstd.Header
	if err := h.Decode(frame); err != nil || h.DictionaryID != 1 {
		t.Fatalf("the frame names dictionary %d (%v), want 1", h.DictionaryID, err)
	}
	got, err := Decode(nil, append([]byte{Tag}, frame[len(magic):]...))
	if err != nil || !bytes.Equal(got, value) {
		t.Fatalf("Decode = %d bytes, %v; want the %d bytes back", len(got), err, len(value))
	}
}

// No dictionary is numbered 0: zstd would apply a dictionary of ID 0 to every frame that names
// none, the frames of values of entropyMin bytes or more.
func TestNoDictionaryIsNumberedZero(t *testing.T) {
	for _, d := range Dictionaries {
		if d.ID == 0 {
			t.Fatal("a dictionary is numbered 0")
		}
	}
}

// bigJSON is n bytes or a little more of JSON lines that differ in their numbers.
func bigJSON(n int) []byte {
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, `{"seq":%d,"tool":"Read","params":{"file_path":"/home/dev/shop/apps/web/src/c%d.ts"}}`+"\n", i, i*7919%100003)
	}
	return b
}
