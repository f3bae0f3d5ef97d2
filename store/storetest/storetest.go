// Package storetest is the conformance suite of store.Store: one set of scenarios that every
// implementation of the task log runs, so that what a session or a replay tool relies on holds
// whichever store keeps the log. The promises checked are those documented on the methods of
// store.DB; an implementation's own tests call Run with a function that opens a fresh, empty
// store.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openEmpty(t) })
//	}
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// Run runs the conformance suite. open must return a new, empty store each time it is called,
// and arrange for it to be closed (and its resources removed) when t ends; the suite closes
// some stores itself, so a second Close must be harmless. Subtests run one after another: open
// may share an expensive resource, such as a server, between the stores it returns. A store that
// lacks one of the optional interfaces of package store says so with an Option (Lacks).
func Run(t *testing.T, open func(t *testing.T) store.Store, opts ...Option) {
	groups := []struct {
		name string
		run  func(t *testing.T, open func(t *testing.T) store.Store)
	}{
		{"append seals the chain", testAppendSeals},
		{"the caller's data once Append returns", testAppendKeepsNoData},
		{"expected version", testExpectedVersion},
		{"idempotency by event id", testIdempotency},
		{"refused appends write nothing", testRefused},
		{"events", testEvents},
		{"head and tasks", testHeadAndTasks},
		{"blobs", testBlobs},
		{"snapshots", testSnapshots},
		{"verify", testVerify},
		{"close", testClose},
		{"concurrent appends", testConcurrent},
		{"appends cancelled at random moments", testCancelled},
		{"close during appends", testCloseDuringAppends},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, open) })
	}
	t.Run("optional interfaces", func(t *testing.T) { testOptional(t, open, opts) })
}

// ids makes the suite's event ids: unique and increasing, like a runtime's.
var ids = events.NewIDSource(nil)

// base is the time of the suite's first event; later events are a millisecond apart.
var base = time.Date(2026, 3, 1, 9, 30, 0, 123456789, time.UTC)

// message returns a user_message event with a fresh id, as a runtime records one: no task,
// seq or hashes yet.
func message(t testing.TB, turn int, text string) events.Event {
	t.Helper()
	ev, err := events.New(&events.UserMessage{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	ev.Turn = turn
	ev.Time = base.Add(time.Duration(turn) * time.Minute)
	if ev.ID, err = ids.New(ev.Time); err != nil {
		t.Fatal(err)
	}
	return ev
}

// messages returns n events, ten to a turn from turn 1, their text prefix and their index.
func messages(t testing.TB, n int, prefix string) []events.Event {
	t.Helper()
	out := make([]events.Event, n)
	for i := range out {
		out[i] = message(t, 1+i/10, fmt.Sprintf("%s %d", prefix, i))
	}
	return out
}

// large returns a user_message event of about size bytes of text, fill repeated. Its payload
// is written directly (fill must need no escaping in JSON): encoding megabytes through
// encoding/json would cost the suite more than the store does.
func large(t testing.TB, size int, fill string) events.Event {
	t.Helper()
	ev := message(t, 4, "large")
	text := strings.Repeat(fill, size/len(fill))
	ev.Data = []byte(`{"text":"` + text + `"}`)
	if p, err := ev.Payload(); err != nil || p.(*events.UserMessage).Text != text {
		t.Fatalf("the large event does not decode to its text: %v", err)
	}
	return ev
}

// imported returns an event made from record i of an imported file: it carries an Origin.
func imported(t testing.TB, i int) events.Event {
	t.Helper()
	ev := message(t, 1, fmt.Sprintf("imported record %d", i))
	ev.Origin = &events.Origin{File: "sessions/2026-03-01.jsonl", Record: i}
	return ev
}

// sealed is what a store must make of evs appended after head: the task's id, the next
// sequence numbers and hashes chained from the head's, computed here independently of any store.
func sealed(task uuid.UUID, head store.Head, evs []events.Event) []events.Event {
	out := make([]events.Event, len(evs))
	prev := head.Hash
	for i, ev := range evs {
		ev.Task, ev.Seq = task, head.Seq+1+uint64(i)
		ev.Seal(prev)
		prev = ev.Hash
		out[i] = ev
	}
	return out
}

// sameEvents fails t unless got and want encode to the same bytes, event by event.
func sameEvents(t testing.TB, what string, got, want []events.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range got {
		if g, w := got[i].AppendBinary(nil), want[i].AppendBinary(nil); !bytes.Equal(g, w) {
			t.Fatalf("%s: event %d is %+v\nwant %+v", what, i, got[i], want[i])
		}
	}
}

// mustAppend appends evs and fails t on an error.
func mustAppend(t testing.TB, s store.Store, task uuid.UUID, expected uint64, evs ...events.Event) store.Appended {
	t.Helper()
	a, err := s.Append(context.Background(), task, expected, evs...)
	if err != nil {
		t.Fatalf("Append(%d events at version %d): %v", len(evs), expected, err)
	}
	return a
}

// readAll reads task's log from seq from on and fails t on an error.
func readAll(t testing.TB, s store.Store, task uuid.UUID, from uint64) []events.Event {
	t.Helper()
	var out []events.Event
	for ev, err := range s.Events(context.Background(), task, from) {
		if err != nil {
			t.Fatalf("Events(from %d) after %d events: %v", from, len(out), err)
		}
		out = append(out, ev)
	}
	return out
}

// checkLog fails t unless task's log is exactly want, sealed into a chain that a ChainVerifier
// accepts, with the matching head, and Verify passes.
func checkLog(t testing.TB, s store.Store, task uuid.UUID, want []events.Event) {
	t.Helper()
	got := readAll(t, s, task, 1)
	sameEvents(t, "the log read back", got, want)
	chain := store.NewChainVerifier(task)
	for i := range got {
		if err := chain.Check(&got[i]); err != nil {
			t.Fatalf("the log read back is not a sound chain: %v", err)
		}
	}
	h, err := s.Head(task)
	if err != nil {
		t.Fatalf("Head: %v", err)
	}
	last := got[len(got)-1]
	if wantHead := (store.Head{Seq: last.Seq, Hash: last.Hash, LastTurn: last.Turn}); h != wantHead {
		t.Fatalf("Head = %+v, want %+v", h, wantHead)
	}
	if err := s.Verify(context.Background(), task); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// checkHead fails t unless task's head is at seq, or unless the task has no events if seq is 0.
func checkHead(t testing.TB, s store.Store, task uuid.UUID, seq uint64) {
	t.Helper()
	h, err := s.Head(task)
	switch {
	case seq == 0 && !errors.Is(err, store.ErrTaskNotFound):
		t.Fatalf("Head = %+v, %v; want ErrTaskNotFound: the task should have no events", h, err)
	case seq != 0 && err != nil:
		t.Fatalf("Head: %v", err)
	case seq != 0 && h.Seq != seq:
		t.Fatalf("Head at seq %d, want %d", h.Seq, seq)
	}
}
