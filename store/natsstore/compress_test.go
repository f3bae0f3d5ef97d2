package natsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

// bigNote is an event whose payload compresses well, as decisions do.
func bigNote(t *testing.T, turn int, i int) events.Event {
	return note(t, turn, strings.Repeat(fmt.Sprintf("rule-%d excluded: no candidate path matches src/mod/** ", i), 40))
}

// A stream written before records were compressed is read as it was, takes compressed records
// after its old ones, and the whole log reads back, verifies and repeats as one chain.
func TestUncompressedStreamReadable(t *testing.T) {
	srv := startServer(t)
	for _, layout := range layouts {
		t.Run(fmt.Sprintf("layout%d", layout), func(t *testing.T) {
			old := openStore(t, srv, &Options{layout: layout})
			old.noCompress = true
			task := uuid.New()
			before := []events.Event{bigNote(t, 1, 1), note(t, 1, "a"), bigNote(t, 2, 2)}
			mustAppend(t, old, task, 0, before...)
			blob := []byte(strings.Repeat("# Rules\n\nUse the design tokens.\n", 50))
			sum, err := old.PutBlob(blob)
			if err != nil {
				t.Fatal(err)
			}
			s := openStoreOn(t, old)
			after := []events.Event{bigNote(t, 3, 3), note(t, 3, "b")}
			mustAppend(t, s, task, 3, after...)

			msgs := rawMessages(t, s, s.taskFilter(task))
			if len(msgs) != 5 || payloadcodec.IsCompressed(msgs[0].Data) || !payloadcodec.IsCompressed(msgs[3].Data) {
				t.Fatalf("%d messages; the first compressed %v, the fourth %v; want 5, the old ones as they were", len(msgs), payloadcodec.IsCompressed(msgs[0].Data), payloadcodec.IsCompressed(msgs[3].Data))
			}
			var got []events.Event
			for ev, err := range s.Events(context.Background(), task, 1) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ev)
			}
			want := append(before, after...)
			if len(got) != len(want) {
				t.Fatalf("read %d events, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID || !bytes.Equal(got[i].Data, want[i].Data) {
					t.Fatalf("seq %d reads back otherwise", i+1)
				}
			}
			if err := s.Verify(context.Background(), task); err != nil {
				t.Fatal(err)
			}
			if a, err := s.Append(context.Background(), task, 0, before...); err != nil || !a.Duplicate {
				t.Errorf("a repeat of the old batch = %+v, %v", a, err)
			}
			if data, err := s.Blob(sum); err != nil || !bytes.Equal(data, blob) {
				t.Errorf("the old blob = %d bytes, %v", len(data), err)
			}
			sum2, err := s.PutBlob(append(blob, "and one more line\n"...))
			if err != nil {
				t.Fatal(err)
			}
			if data, err := s.Blob(sum2); err != nil || !bytes.HasSuffix(data, []byte("one more line\n")) {
				t.Errorf("a compressed blob = %d bytes, %v", len(data), err)
			}
		})
	}
}

// A compressed record that does not decompress is ErrCorrupt naming the task, for reads and
// for verify; nothing panics.
func TestDamagedCompressedMessage(t *testing.T) {
	srv := startServer(t)
	s := openStore(t, srv, &Options{layout: Layout2})
	task := uuid.New()
	a := mustAppend(t, s, task, 0, bigNote(t, 1, 1), bigNote(t, 1, 2))
	msgs := rawMessages(t, s, s.taskFilter(task))
	enc := payloadcodec.Encode(nil, a.Events[1].AppendBinary(nil))
	m := nats.NewMsg(s.taskFilter(task))
	m.Data = append([]byte(nil), enc[:len(enc)/2]...)
	m.Header.Set("Nats-Expected-Last-Subject-Sequence", fmt.Sprint(msgs[1].Sequence))
	if _, err := s.publishRaw(m); err != nil {
		t.Fatal(err)
	}
	var readErr error
	for _, err := range s.Events(context.Background(), task, 1) {
		if err != nil {
			readErr = err
			break
		}
	}
	err := s.Verify(context.Background(), task)
	for name, err := range map[string]error{"Events": readErr, "Verify": err} {
		if !errors.Is(err, store.ErrCorrupt) && !errors.Is(err, store.ErrChainBroken) {
			t.Errorf("%s = %v, want ErrCorrupt or a VerifyError", name, err)
			continue
		}
		if !strings.Contains(err.Error(), task.String()) || !strings.Contains(err.Error(), "does not decode") {
			t.Errorf("%s = %q: does not name the task and the damaged record", name, err)
		}
	}
}
