package payloadcodec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// trainPayloads are the payloads of testdata/train.jsonl.
func trainPayloads(b testing.TB) [][]byte {
	log, err := os.ReadFile("testdata/train.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l struct {
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && len(l.Data) > 0 {
			out = append(out, l.Data)
		}
	}
	return out
}

// BenchmarkEncode compresses recorded payloads one at a time, as appends do.
func BenchmarkEncode(b *testing.B) {
	ps := trainPayloads(b)
	var dst []byte
	n := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := ps[i%len(ps)]
		dst = Encode(dst[:0], p)
		n += len(p)
	}
	b.SetBytes(int64(n / max(b.N, 1)))
}

// BenchmarkDecode decompresses them one at a time, as reads do.
func BenchmarkDecode(b *testing.B) {
	ps := trainPayloads(b)
	stored := make([][]byte, len(ps))
	for i, p := range ps {
		stored[i] = Encode(nil, p)
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
