package natsstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

var testIDs = events.NewIDSource(nil)

// note returns a user message event with a fresh id, as a runtime records one.
func note(t testing.TB, turn int, text string) events.Event {
	t.Helper()
	ev, err := events.New(&events.UserMessage{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	ev.Turn = turn
	ev.Time = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC).Add(time.Duration(turn) * time.Second)
	if ev.ID, err = testIDs.New(ev.Time); err != nil {
		t.Fatal(err)
	}
	return ev
}

func notes(t testing.TB, n int, prefix string) []events.Event {
	out := make([]events.Event, n)
	for i := range out {
		out[i] = note(t, 1+i, fmt.Sprintf("%s %d", prefix, i))
	}
	return out
}

// rawMessages reads every message of the store's stream on subject filter, in stream order.
func rawMessages(t *testing.T, s *Store, filter string) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	st, err := s.js.Stream(ctx, s.stream)
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := uint64(1); ; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(filter))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
		seq = m.Sequence + 1
	}
}

func mustAppend(t testing.TB, s store.Store, task uuid.UUID, expected uint64, evs ...events.Event) store.Appended {
	t.Helper()
	a, err := s.Append(context.Background(), task, expected, evs...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Each event is one message holding exactly the bytes the bbolt store keeps for it: the same
// chain, sealed the same way. In layout 1 it is on the subject naming its task and id; in layout
// 2 on its task's log subject, with a marker on the subject naming its id; in layout 3 on its
// task's log subject, spelled shorter, without a message id, just after an empty marker on the
// subject naming its id.
func TestEventsAreMessagesWithBboltBytes(t *testing.T) {
	srv := startServer(t)
	for _, layout := range layouts {
		t.Run(fmt.Sprintf("layout%d", layout), func(t *testing.T) {
			s := openStore(t, srv, &Options{layout: layout})
			db, err := store.Open(filepath.Join(t.TempDir(), "tasks.db"), &store.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			task := uuid.New()
			batches := [][]events.Event{notes(t, 1, "one"), notes(t, 3, "three"), notes(t, 2, "two")}
			var head uint64
			for _, b := range batches {
				mustAppend(t, db, task, head, b...)
				a := mustAppend(t, s, task, head, b...)
				head = a.Last
			}
			msgs := rawMessages(t, s, s.taskFilter(task))
			if len(msgs) != 6 {
				t.Fatalf("%d messages on the task's subjects, want 6", len(msgs))
			}
			var markers []*jetstream.RawStreamMsg
			if layout != Layout1 {
				markers = rawMessages(t, s, s.idFilter(task))
			}
			if want := map[int]int{Layout1: 0, Layout2: 6, Layout3: 6}[layout]; len(markers) != want {
				t.Fatalf("%d id markers, want %d", len(markers), want)
			}
			seq := uint64(0)
			for ev, err := range db.Events(context.Background(), task, 1) {
				if err != nil {
					t.Fatal(err)
				}
				m := msgs[seq]
				seq++
				want := fmt.Sprintf("%s.ev.%s.%s", s.stream, task, ev.ID)
				wantMsgID := task.String() + "." + ev.ID.String()
				switch layout {
				case Layout2:
					want = fmt.Sprintf("%s.log.%s", s.stream, task)
					mk := markers[seq-1]
					if mk.Subject != fmt.Sprintf("%s.id.%s.%s", s.stream, task, ev.ID) || string(mk.Data) != strconv.FormatUint(seq, 10) || mk.Sequence >= m.Sequence {
						t.Errorf("seq %d: marker %s holding %q at stream seq %d, want the id's subject holding the seq before the event at %d", seq, mk.Subject, mk.Data, mk.Sequence, m.Sequence)
					}
				case Layout3:
					want = s.stream + "." + base64.RawURLEncoding.EncodeToString(task[:])
					wantMsgID = ""
					mk := markers[seq-1]
					wantMk := want + "." + base64.RawURLEncoding.EncodeToString(ev.ID[:])
					if mk.Subject != wantMk || len(mk.Data) != 0 || mk.Sequence+1 != m.Sequence {
						t.Errorf("seq %d: marker %s holding %q at stream seq %d, want %s holding nothing just before the event at %d", seq, mk.Subject, mk.Data, mk.Sequence, wantMk, m.Sequence)
					}
				}
				if m.Subject != want {
					t.Errorf("seq %d is on subject %s, want %s", seq, m.Subject, want)
				}
				if got := m.Header.Get("Nats-Msg-Id"); got != wantMsgID {
					t.Errorf("seq %d: Nats-Msg-Id %q, want %q", seq, got, wantMsgID)
				}
				if got, err := payloadcodec.Decode(nil, m.Data); err != nil || !bytes.Equal(got, ev.AppendBinary(nil)) {
					t.Errorf("seq %d: the message's bytes do not decode to the event's encoding bbolt keeps (%v)", seq, err)
				}
			}
			if err := s.Verify(context.Background(), task); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The expected version is a task's count, the server's check a stream sequence: with tasks
// interleaved they differ, and a write carrying a stale stream sequence is refused by the server.
func TestExpectedVersionMapsToSubjectSequence(t *testing.T) {
	srv := startServer(t)
	for _, tc := range []struct {
		layout int
		// where task a's second event is in the stream, and its first
		head, before uint64
	}{
		{Layout1, 6, 3}, // two task markers and four events
		{Layout2, 8, 2}, // four id markers and four events
		{Layout3, 8, 2}, // four id markers and four events, each marker before its event
	} {
		t.Run(fmt.Sprintf("layout%d", tc.layout), func(t *testing.T) {
			s := openStore(t, srv, &Options{layout: tc.layout})
			a, b := uuid.New(), uuid.New()
			mustAppend(t, s, a, 0, note(t, 1, "a1"))
			mustAppend(t, s, b, 0, note(t, 1, "b1"))
			mustAppend(t, s, b, 1, note(t, 2, "b2"))
			mustAppend(t, s, a, 1, note(t, 2, "a2"))
			h, err := s.readHead(context.Background(), a)
			if err != nil {
				t.Fatal(err)
			}
			if h.seq != 2 || h.sseq != tc.head {
				t.Fatalf("head of a: task seq %d at stream seq %d, want 2 at %d", h.seq, h.sseq, tc.head)
			}

			// What a second writer holding the old head would send: the server refuses it.
			ev := note(t, 3, "stale")
			ev.Task, ev.Seq = a, 2
			ev.Seal(events.Hash{})
			m := nats.NewMsg(s.taskFilter(a))
			if tc.layout == Layout1 {
				m = nats.NewMsg(s.idSubject(a, ev.ID))
				m.Header.Set("Nats-Expected-Last-Subject-Sequence-Subject", s.taskFilter(a))
			}
			m.Data = ev.AppendBinary(nil)
			m.Header.Set("Nats-Expected-Last-Subject-Sequence", strconv.FormatUint(tc.before, 10)) // a's head before a2
			ack, err := s.publishRaw(m)
			if err == nil || apiCode(err) != codeWrongLastSeq {
				t.Fatalf("a write with a stale subject sequence: ack %+v, error %v; want wrong last sequence", ack, err)
			}

			// Through the store the same stale write is a version conflict with the actual head.
			_, err = s.Append(context.Background(), a, 1, note(t, 3, "stale"))
			var vc *store.VersionConflictError
			if !errors.As(err, &vc) || vc.Actual != 2 || vc.Expected != 1 {
				t.Fatalf("append at a stale version: %v, want a conflict at head 2", err)
			}
			// A Store whose cached head is stale (another process appended) still appends at the
			// right place: the server refuses the stale sequence and the store reads the head again.
			other := openStoreOn(t, s)
			mustAppend(t, other, a, 2, note(t, 3, "from another process"))
			if got := mustAppend(t, s, a, 3, note(t, 4, "after it")); got.First != 4 {
				t.Fatalf("append after another writer's: first %d, want 4", got.First)
			}
			if err := s.Verify(context.Background(), a); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// openStoreOn opens a second Store on the stream of s, with its own connection and caches.
func openStoreOn(t *testing.T, s *Store) *Store {
	t.Helper()
	testServersMu.Lock()
	srv := testServers[s]
	testServersMu.Unlock()
	st, err := Open("nats://in-process/"+s.stream, &Options{Conn: connect(t, srv)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// publishRaw publishes m to the stream and returns the server's acknowledgement.
func (s *Store) publishRaw(m *nats.Msg) (pubAck, error) {
	reply, err := s.request(context.Background(), m)
	if err != nil {
		return pubAck{}, err
	}
	var ack pubAck
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return pubAck{}, err
	}
	if ack.Error != nil {
		return ack, ack.Error
	}
	return ack, nil
}

// A batch is one atomic batch publish: when the server refuses one of its messages, none is
// stored.
func TestBatchIsAllOrNothing(t *testing.T) {
	srv := startServer(t)
	for _, layout := range layouts {
		t.Run(fmt.Sprintf("layout%d", layout), func(t *testing.T) { batchIsAllOrNothing(t, openStore(t, srv, &Options{layout: layout})) })
	}
}

func batchIsAllOrNothing(t *testing.T, s *Store) {
	task := uuid.New()
	stored := note(t, 1, "stored")
	mustAppend(t, s, task, 0, stored)
	before := len(rawMessages(t, s, s.stream+".>"))

	// The third event's id is taken: the server refuses that message (one message per
	// subject, or the id's marker expected to be the first on its subject), and with it the
	// others.
	batch := append(notes(t, 2, "new"), stored)
	_, err := s.publish(context.Background(), task, head{seq: 1, hash: stored.Hash, sseq: 2}, seal(task, head{seq: 1}, batch))
	if err == nil {
		t.Fatal("the server stored a batch holding an event id already stored")
	}
	if after := len(rawMessages(t, s, s.stream+".>")); after != before {
		t.Fatalf("the stream holds %d messages after the refused batch, %d before", after, before)
	}
	_, err = s.Append(context.Background(), task, 1, batch...)
	if !errors.Is(err, store.ErrDuplicateID) {
		t.Fatalf("append of a batch partly stored: %v, want ErrDuplicateID", err)
	}
	if h, _ := s.Head(task); h.Seq != 1 {
		t.Fatalf("head %d after refused batches, want 1", h.Seq)
	}
}

// Within the duplicate window the server recognises a repeated Nats-Msg-Id; past it, the one
// message per subject (layout 1) or the id marker expected to be the first on its subject
// (layout 2) refuses the repeat, and the read-back answers it as bbolt does. Two streams per
// layout: one whose window of a minute a slow machine does not outlast, and one whose window of
// 200 ms the test waits out (until the server forgot the id). Layout 3 writes no message ids:
// its markers refuse every repeat, at once as later.
func TestIdempotencyWithinAndPastTheDuplicateWindow(t *testing.T) {
	srv := startServer(t)
	for _, layout := range layouts {
		t.Run(fmt.Sprintf("layout%d", layout), func(t *testing.T) { idempotency(t, srv, layout) })
	}
}

func idempotency(t *testing.T, srv *server.Server, layout int) {
	if layout == Layout3 {
		idempotencyByMarker(t, srv)
		return
	}
	// repeat is the message of the batch's first event, as its append published it.
	repeat := func(s *Store, task uuid.UUID, batch []events.Event, first store.Appended) *nats.Msg {
		m := nats.NewMsg(s.taskFilter(task))
		if layout == Layout1 {
			m = nats.NewMsg(s.idSubject(task, batch[0].ID))
		}
		m.Data = first.Events[0].AppendBinary(nil)
		m.Header.Set("Nats-Msg-Id", task.String()+"."+batch[0].ID.String())
		return m
	}

	// Within the window: the server's own deduplication acknowledges the original.
	s := openStore(t, srv, &Options{Duplicates: time.Minute, layout: layout})
	task := uuid.New()
	batch := notes(t, 1, "once")
	first := mustAppend(t, s, task, 0, batch...)
	ack, err := s.publishRaw(repeat(s, task, batch, first))
	if err != nil || !ack.Duplicate || ack.Seq != 2 {
		t.Fatalf("a repeated message id within the window: ack %+v, error %v; want a duplicate of seq 2", ack, err)
	}
	a := mustAppend(t, s, task, 0, batch...)
	if !a.Duplicate || a.First != 1 {
		t.Fatalf("a retry within the window: %+v, want the original position as a duplicate", a)
	}

	// Past the window: the message id is forgotten, the id's subject still refuses a repeat.
	const window = 200 * time.Millisecond
	s = openStore(t, srv, &Options{Duplicates: window, layout: layout})
	first = mustAppend(t, s, task, 0, batch...)
	m := repeat(s, task, batch, first)
	wantCode := codeStoreFailed
	if layout == Layout2 {
		// The repeat's marker, as the store sends it: expected first on the id's subject.
		m = nats.NewMsg(s.idSubject(task, batch[0].ID))
		m.Data = []byte("1")
		m.Header.Set("Nats-Expected-Last-Subject-Sequence", "0")
		m.Header.Set("Nats-Msg-Id", task.String()+"."+batch[0].ID.String())
		wantCode = codeWrongLastSeq
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(window) {
		// A repeat the server still recognises changes nothing.
		if ack, err = s.publishRaw(m); err != nil || !ack.Duplicate {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still recognises a message id a minute past its window of %v", window)
		}
	}
	if apiCode(err) != wantCode {
		t.Fatalf("a repeated message id past the window: ack %+v, error %v; want JetStream error %d", ack, err, wantCode)
	}
	a = mustAppend(t, s, task, 0, batch...)
	if !a.Duplicate || a.First != 1 || a.Events[0].Hash != first.Events[0].Hash {
		t.Fatalf("a retry past the window: %+v, want the original as a duplicate", a)
	}
	changed := batch[0]
	changed.Turn = 9
	if _, err := s.Append(context.Background(), task, 1, changed); !errors.Is(err, store.ErrDuplicateID) {
		t.Fatalf("an id stored with other content, past the window: %v, want ErrDuplicateID", err)
	}
	// The same id in another task is another subject: it is stored.
	if a := mustAppend(t, s, uuid.New(), 0, batch...); a.Duplicate {
		t.Fatal("an id of one task was taken as a repeat in another")
	}
	if err := s.Verify(context.Background(), task); err != nil {
		t.Fatal(err)
	}
}

// idempotencyByMarker: in layout 3 an event's message carries no message id, and its marker,
// expected first on the id's subject, refuses a repeat however soon it comes: a retry is
// answered as a repeat, the same id with other content is ErrDuplicateID, the same id in
// another task is stored.
func idempotencyByMarker(t *testing.T, srv *server.Server) {
	s := openStore(t, srv, &Options{Duplicates: time.Minute, layout: Layout3})
	task := uuid.New()
	batch := notes(t, 1, "once")
	first := mustAppend(t, s, task, 0, batch...)
	for _, m := range rawMessages(t, s, s.stream+".>") {
		if id := m.Header.Get("Nats-Msg-Id"); id != "" {
			t.Fatalf("message %d (%s) carries Nats-Msg-Id %q; layout 3 writes none", m.Sequence, m.Subject, id)
		}
	}
	m := nats.NewMsg(s.idSubject(task, batch[0].ID))
	m.Header.Set("Nats-Expected-Last-Subject-Sequence", "0")
	if ack, err := s.publishRaw(m); apiCode(err) != codeWrongLastSeq {
		t.Fatalf("a repeated marker: ack %+v, error %v; want JetStream error %d", ack, err, codeWrongLastSeq)
	}
	for _, expected := range []uint64{0, 1} {
		a := mustAppend(t, s, task, expected, batch...)
		if !a.Duplicate || a.First != 1 || a.Events[0].Hash != first.Events[0].Hash {
			t.Fatalf("a retry at expected version %d: %+v, want the original as a duplicate", expected, a)
		}
	}
	changed := batch[0]
	changed.Turn = 9
	if _, err := s.Append(context.Background(), task, 1, changed); !errors.Is(err, store.ErrDuplicateID) {
		t.Fatalf("an id stored with other content: %v, want ErrDuplicateID", err)
	}
	if a := mustAppend(t, s, uuid.New(), 0, batch...); a.Duplicate {
		t.Fatal("an id of one task was taken as a repeat in another")
	}
	if h, err := s.Head(task); err != nil || h.Seq != 1 {
		t.Fatalf("head %+v, %v after the repeats; want 1", h, err)
	}
	if err := s.Verify(context.Background(), task); err != nil {
		t.Fatal(err)
	}
}

// Open creates the stream with what makes an acknowledged append durable and keeps the log
// whole: file storage, the replicas asked for, discard new, deletes and purges denied. The
// test server syncs every write; an append acknowledged before the server stops is there when
// it starts again on the same directory.
func TestStreamIsDurable(t *testing.T) {
	dir := t.TempDir()
	srv := startServerIn(t, dir)
	s := openStore(t, srv, nil)
	info, err := s.js.Stream(context.Background(), s.stream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.CachedInfo().Config
	if cfg.Storage != jetstream.FileStorage || cfg.Replicas != 1 || cfg.Discard != jetstream.DiscardNew ||
		!cfg.DenyDelete || !cfg.DenyPurge || !cfg.AllowAtomicPublish || cfg.Metadata[LayoutMetadataKey] != "3" {
		t.Fatalf("stream config %+v", cfg)
	}
	if !srv.JetStreamConfig().SyncAlways {
		t.Fatal("the test server does not sync every write")
	}
	task := uuid.New()
	a := mustAppend(t, s, task, 0, notes(t, 5, "kept")...)
	stream := s.stream
	s.Close()
	srv.Shutdown()
	srv.WaitForShutdown()

	srv2 := startServerIn(t, dir)
	s2, err := Open("nats://in-process/"+stream, &Options{Conn: connect(t, srv2)})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	h, err := s2.Head(task)
	if err != nil || h.Seq != a.Last || h.Hash != a.Events[4].Hash {
		t.Fatalf("after a restart: head %+v, %v; want seq %d", h, err, a.Last)
	}
	if err := s2.Verify(context.Background(), task); err != nil {
		t.Fatal(err)
	}
}

// Blobs and snapshots are objects of the stream's object stores.
func TestBlobsAndSnapshotsAreObjects(t *testing.T) {
	s := openStore(t, startServer(t), nil)
	sum, err := s.PutBlob([]byte("rule file content"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	obs, err := s.js.ObjectStore(ctx, s.stream+"_blobs")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := obs.GetBytes(ctx, sum); err != nil || string(got) != "rule file content" {
		t.Fatalf("object %s: %q, %v", sum, got, err)
	}
	task := uuid.New()
	if err := s.PutSnapshot(task, "rules", 7, []byte("state")); err != nil {
		t.Fatal(err)
	}
	snaps, err := s.js.ObjectStore(ctx, s.stream+"_snapshots")
	if err != nil {
		t.Fatal(err)
	}
	got, err := snaps.GetBytes(ctx, task.String()+"/rules")
	if err != nil || len(got) != 8+len("state") || string(got[8:]) != "state" {
		t.Fatalf("snapshot object: %q, %v", got, err)
	}
}

// Errors name the server and the stream, and a server that is down fails a call within the
// timeout instead of hanging.
func TestServerDown(t *testing.T) {
	port := freePort(t)
	url := "nats://127.0.0.1:" + strconv.Itoa(port) + "/LOGS"
	done := make(chan error, 1)
	go func() {
		_, err := Open(url, &Options{Timeout: 300 * time.Millisecond})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("127.0.0.1:"+strconv.Itoa(port))) || !bytes.Contains([]byte(err.Error()), []byte("LOGS")) {
			t.Fatalf("open with no server: %v; want an error naming the server and the stream", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("open with no server hangs")
	}

	srv := startServer(t)
	s := openStore(t, srv, nil)
	task := uuid.New()
	mustAppend(t, s, task, 0, note(t, 1, "before"))
	// The short timeout only once the server is down: with it up, a slow machine may need more.
	s.timeout = 300 * time.Millisecond
	srv.Shutdown()
	srv.WaitForShutdown()
	calls := map[string]func() error{
		"append": func() error { _, err := s.Append(context.Background(), task, 1, note(t, 2, "after")); return err },
		"head":   func() error { _, err := s.Head(task); return err },
		"events": func() error {
			for _, err := range s.Events(context.Background(), task, 1) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"blob": func() error { _, err := s.PutBlob([]byte("x")); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- call() }()
			select {
			case err := <-done:
				if err == nil || !bytes.Contains([]byte(err.Error()), []byte(s.stream)) {
					t.Fatalf("%s with the server down: %v; want an error naming the stream", name, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s with the server down hangs", name)
			}
		})
	}
}

// An event too large for one message is kept in the object store; its message names it, and
// reads, verify and a repeat of the append see the event as if it were inline.
func TestLargeEventsSpill(t *testing.T) {
	srv := startServer(t)
	for _, layout := range layouts {
		t.Run(fmt.Sprintf("layout%d", layout), func(t *testing.T) { largeEventsSpill(t, openStore(t, srv, &Options{layout: layout})) })
	}
}

func largeEventsSpill(t *testing.T, s *Store) {
	s.maxInline = 300
	task := uuid.New()
	// Random text: compressed, it stays larger than maxInline.
	noise := make([]byte, 600)
	rand.Read(noise)
	small, large := note(t, 1, "small"), note(t, 2, hex.EncodeToString(noise))
	a := mustAppend(t, s, task, 0, small, large)
	msgs := rawMessages(t, s, s.taskFilter(task))
	if len(msgs) != 2 || msgs[0].Header.Get(spillHeader) != "" || msgs[1].Header.Get(spillHeader) == "" || len(msgs[1].Data) != 0 {
		t.Fatalf("the large event's message: header %q, %d bytes; want a spilled event", msgs[1].Header.Get(spillHeader), len(msgs[1].Data))
	}
	var got []events.Event
	for ev, err := range s.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if len(got) != 2 || !bytes.Equal(got[1].AppendBinary(nil), a.Events[1].AppendBinary(nil)) {
		t.Fatalf("read back %d events; the spilled one differs", len(got))
	}
	if h, err := s.Head(task); err != nil || h.Hash != a.Events[1].Hash {
		t.Fatalf("head %+v, %v", h, err)
	}
	if err := s.Verify(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if again := mustAppend(t, s, task, 0, small, large); !again.Duplicate {
		t.Fatal("a repeat of an append with a spilled event was not recognised")
	}
	// A spilled event first in the log, and reading from it.
	other := uuid.New()
	first := mustAppend(t, s, other, 0, note(t, 1, string(bytes.Repeat([]byte("y"), 1000))), note(t, 2, "after"))
	for from := uint64(1); from <= 2; from++ {
		n := 0
		for ev, err := range s.Events(context.Background(), other, from) {
			if err != nil {
				t.Fatal(err)
			}
			if want := first.Events[from-1+uint64(n)]; ev.Hash != want.Hash {
				t.Fatalf("from %d: event %d differs", from, n)
			}
			n++
		}
		if n != int(3-from) {
			t.Fatalf("from %d: read %d events", from, n)
		}
	}
}

// Verify checks every event has its id marker: an event published without one is found (a
// late retry of it could be stored twice), and in layout 3 so is a marker that is not stored
// just before its event, which is how it names it.
func TestVerifyChecksMarkers(t *testing.T) {
	srv := startServer(t)
	for _, layout := range []int{Layout2, Layout3} {
		t.Run(fmt.Sprintf("layout%d", layout), func(t *testing.T) {
			s := openStore(t, srv, &Options{layout: layout})
			// publishEvent publishes task's next event on its log subject as other code might,
			// with its marker first when marker is set, and a message on another subject between
			// the two when apart is.
			publishEvent := func(task uuid.UUID, marker, apart bool) {
				t.Helper()
				h, err := s.readHead(context.Background(), task)
				if err != nil {
					t.Fatal(err)
				}
				ev := seal(task, h, []events.Event{note(t, 9, "by other code")})[0]
				if marker {
					mk := nats.NewMsg(s.idSubject(task, ev.ID))
					if layout == Layout2 {
						mk.Data = strconv.AppendUint(nil, ev.Seq, 10)
					}
					if _, err := s.publishRaw(mk); err != nil {
						t.Fatal(err)
					}
				}
				if apart {
					mustAppend(t, s, uuid.New(), 0, note(t, 1, "another task"))
				}
				m := nats.NewMsg(s.taskFilter(task))
				m.Data = ev.AppendBinary(nil)
				if _, err := s.publishRaw(m); err != nil {
					t.Fatal(err)
				}
			}
			cases := []struct {
				name          string
				marker, apart bool
				want          string
			}{
				{"no marker", false, false, "has no id marker"},
				{"marker apart from its event", true, true, "an event's id is not recorded with it"},
			}
			for _, tc := range cases {
				task := uuid.New()
				mustAppend(t, s, task, 0, notes(t, 2, "ab")...)
				if err := s.Verify(context.Background(), task); err != nil {
					t.Fatalf("%s: before: %v", tc.name, err)
				}
				publishEvent(task, tc.marker, tc.apart)
				err := s.Verify(context.Background(), task)
				var ve *store.VerifyError
				if layout == Layout2 && tc.apart {
					// Layout 2's markers name their events by sequence, wherever they are.
					if err != nil {
						t.Fatalf("%s: %v, want none", tc.name, err)
					}
					continue
				}
				if !errors.As(err, &ve) || ve.Seq != 3 || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%s: %v, want a VerifyError at seq 3 saying %q", tc.name, err, tc.want)
				}
			}
		})
	}
}
