package events

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// The compact encoding and a Link rebuild the binary encoding byte for byte, and decode to the
// event that encoding decodes to, whatever fields are set: time or none, origin or none, empty to large data, first or later event, small and large
// sequence numbers and turns.
func TestCompactRoundTrip(t *testing.T) {
	var prev Hash
	prev[0], prev[31] = 0xab, 0x01
	times := []time.Time{{}, time.Unix(1700000000, 5), time.Unix(-5, 0)}
	origins := []*Origin{nil, {File: "x.jsonl", Record: 3}, {File: strings.Repeat("f", 300), Record: 1 << 40}}
	datas := [][]byte{nil, []byte(`{}`), []byte(`"` + strings.Repeat("a", 5000) + `"`)}
	links := []struct {
		seq  uint64
		turn int
		prev Hash
	}{{1, 0, Hash{}}, {300, 7, prev}, {1 << 50, 1 << 30, prev}}
	n := 0
	for _, at := range times {
		for _, origin := range origins {
			for _, data := range datas {
				for _, l := range links {
					n++
					t.Run(fmt.Sprint(n), func(t *testing.T) {
						ev := Event{Task: testTask, Seq: l.seq, ID: ulid.Make(), Turn: l.turn, Time: at, Type: TypeToolCall, V: 2,
							Data: data, Origin: origin}
						ev.Seal(l.prev)
						want := ev.AppendBinary(nil)
						compact := ev.AppendCompact(nil)
						if len(compact) >= len(want)-16-32-32 {
							t.Errorf("compact %d bytes, binary %d: the task and both hashes are not left out", len(compact), len(want))
						}
						got, err := expandCompact([]byte("prefix"), compact, linkOf(&ev))
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(got[6:], want) || string(got[:6]) != "prefix" {
							t.Fatalf("expanded\n%x\nwant\n%x", got[6:], want)
						}
						var back Event
						if err := back.UnmarshalBinary(got[6:]); err != nil {
							t.Fatal(err)
						}
						if back.ComputeHash() != ev.Hash || back.Seq != ev.Seq || back.Turn != ev.Turn || back.Task != ev.Task {
							t.Errorf("read back %+v", back)
						}
						var direct Event
						if err := direct.UnmarshalCompact(compact, linkOf(&ev)); err != nil {
							t.Fatal(err)
						}
						if enc := direct.AppendBinary(nil); !bytes.Equal(enc, want) {
							t.Fatalf("decoded from the compact encoding, it encodes as\n%x\nwant\n%x", enc, want)
						}
					})
				}
			}
		}
	}
}

// A link other than the event's rebuilds an encoding whose hash is not the stored one: a record
// kept at another position, or with a damaged hash beside it, does not verify.
func TestCompactWrongLinkChangesTheHash(t *testing.T) {
	ev := Event{Task: testTask, Seq: 5, ID: ulid.Make(), Turn: 2, Time: time.Unix(1700000000, 0), Type: TypeUserMessage, V: 1, Data: []byte(`{"text":"hi"}`)}
	ev.Seal(Hash{1})
	compact := ev.AppendCompact(nil)
	for name, change := range map[string]func(*Link){
		"seq":  func(l *Link) { l.Seq++ },
		"turn": func(l *Link) { l.Turn++ },
		"prev": func(l *Link) { l.Prev[3] ^= 1 },
		"task": func(l *Link) { l.Task[0] ^= 1 },
		"hash": func(l *Link) { l.Hash[31] ^= 1 },
	} {
		l := linkOf(&ev)
		change(&l)
		raw, err := expandCompact(nil, compact, l)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got Event
		if err := got.UnmarshalBinary(raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.ComputeHash() == got.Hash {
			t.Errorf("a changed %s still verifies", name)
		}
	}
}

// A compact encoding cut short or of an unknown format is ErrCorrupt, rebuilt or decoded.
func TestCompactRefusesDamage(t *testing.T) {
	ev := Event{Task: testTask, Seq: 5, ID: ulid.Make(), Time: time.Unix(1700000000, 0), Type: TypeToolCall, V: 1,
		Origin: &Origin{File: "a.jsonl", Record: 9}}
	compact := ev.AppendCompact(nil)
	for n := range len(compact) {
		if _, err := expandCompact(nil, compact[:n], linkOf(&ev)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("cut to %d of %d bytes: %v, want ErrCorrupt", n, len(compact), err)
		}
		var got Event
		if err := got.UnmarshalCompact(compact[:n], linkOf(&ev)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decoding a cut to %d of %d bytes: %v, want ErrCorrupt", n, len(compact), err)
		}
	}
	bad := append([]byte{7}, compact[1:]...)
	if _, err := expandCompact(nil, bad, linkOf(&ev)); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "unknown format 7") {
		t.Errorf("format 7: %v", err)
	}
	var got Event
	if err := got.UnmarshalCompact(bad, linkOf(&ev)); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "unknown format 7") {
		t.Errorf("decoding format 7: %v", err)
	}
}

// linkOf returns the fields of e that its compact encoding leaves out.
func linkOf(e *Event) Link {
	return Link{Task: e.Task, Seq: e.Seq, Turn: e.Turn, Prev: e.Prev, Hash: e.Hash}
}

// expandCompact appends to dst the binary encoding the stores hash: the event decoded from its
// compact encoding and l, encoded again.
func expandCompact(dst, compact []byte, l Link) ([]byte, error) {
	var ev Event
	if err := ev.UnmarshalCompact(compact, l); err != nil {
		return dst, err
	}
	return ev.AppendBinary(dst), nil
}
