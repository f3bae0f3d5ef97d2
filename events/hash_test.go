package events

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"
)

// An event's hash is SHA-256 over its encoding without the hash, whatever its size: small
// events are hashed from a buffer on the stack, larger ones as they are encoded.
func TestComputeHashIsTheEncodingsHash(t *testing.T) {
	for _, size := range []int{0, 1, 300, 380, 400, 511, 512, 513, 4096, 1 << 20} {
		for _, origin := range []*Origin{nil, {File: "x.jsonl", Record: 3}, {File: strings.Repeat("f", 600), Record: 1}} {
			t.Run(fmt.Sprintf("%d/origin=%v", size, origin != nil), func(t *testing.T) {
				ev := Event{Task: testTask, Seq: 7, Turn: 2, Time: time.Unix(1700000000, 5), Type: TypeToolCall, V: 1,
					Data: []byte(`"` + strings.Repeat("a", size) + `"`), Origin: origin}
				ev.Prev[0] = 9
				bin, err := ev.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				if got, want := ev.ComputeHash(), Hash(sha256.Sum256(bin[:len(bin)-len(ev.Hash)])); got != want {
					t.Fatalf("ComputeHash = %x, want %x", got, want)
				}
			})
		}
	}
}
