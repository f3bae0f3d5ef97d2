package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// preparedMix is a batch of every kind of body a record can have: too short to compress (a few
// bytes of data), compressed without and with entropy coding (a short message, one of 6 KB), and
// kept as it is because it does not compress (random bytes).
func preparedMix(t *testing.T, prefix string) []events.Event {
	t.Helper()
	noise := make([]byte, 3000)
	rand.Read(noise)
	texts := []string{"ok", prefix + " read the config of apps/web", strings.Repeat(prefix+" a long tool output line\n", 250),
		string(noise), prefix + " again"}
	evs := make([]events.Event, len(texts))
	for i, text := range texts {
		evs[i] = msg(t, 1+i, text)
	}
	evs[0].Data = []byte(`{}`) // below the size worth compressing
	evs[0].Type = events.TypeUserMessage
	// An imported event, as an import prepares them.
	evs[1].Origin = &events.Origin{File: "session.jsonl", Record: 7}
	return evs
}

// AppendPrepared stores the records Append stores, byte for byte, in every form a file keeps
// them; the events it returns and the log it leaves read back alike, and the chain verifies.
func TestAppendPreparedIsAppend(t *testing.T) {
	for _, form := range []string{"format 4", "uncompressed (format 2)", "whole records (format 3)"} {
		t.Run(form, func(t *testing.T) {
			task := uuid.New()
			batches := [][]events.Event{preparedMix(t, "first"), preparedMix(t, "second")}
			var paths [2]string
			var returned [2][]Appended
			for way := range 2 {
				paths[way] = filepath.Join(t.TempDir(), "tasks.db")
				db := openAt(t, paths[way], &Options{NoSync: true})
				db.noCompress = strings.HasPrefix(form, "uncompressed")
				db.wholeRecords = strings.HasPrefix(form, "whole")
				head := uint64(0)
				for _, evs := range batches {
					var a Appended
					var err error
					if way == 0 {
						a, err = db.Append(context.Background(), task, head, evs...)
					} else {
						var p *Prepared
						if p, err = Prepare(task, evs); err != nil {
							t.Fatal(err)
						}
						a, err = db.AppendPrepared(context.Background(), head, p)
					}
					if err != nil {
						t.Fatal(err)
					}
					returned[way] = append(returned[way], a)
					head = a.Last
				}
				if err := db.Verify(context.Background(), task); err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for i := range returned[0] {
				a, p := returned[0][i], returned[1][i]
				if a.First != p.First || a.Last != p.Last || len(a.Events) != len(p.Events) {
					t.Fatalf("batch %d: Append gave %d..%d, AppendPrepared %d..%d", i, a.First, a.Last, p.First, p.Last)
				}
				for j := range a.Events {
					if !bytes.Equal(a.Events[j].AppendBinary(nil), p.Events[j].AppendBinary(nil)) {
						t.Errorf("batch %d event %d: AppendPrepared returned another event than Append", i, j)
					}
				}
			}
			if n := returned[0][1].Last; n != 10 {
				t.Fatalf("%d events appended, want 10", n)
			}
			tags := map[byte]bool{}
			for seq := uint64(1); seq <= 10; seq++ {
				appended, prepared := storedValue(t, paths[0], task, seq), storedValue(t, paths[1], task, seq)
				if len(appended) == 0 || !bytes.Equal(appended, prepared) {
					t.Errorf("seq %d: AppendPrepared stored %x, Append %x", seq, prepared, appended)
					continue
				}
				tags[appended[0]] = true
			}
			if form == "format 4" && !(tags[tagLinkedRaw] && tags[tagLinkedZstd]) {
				t.Errorf("the records have tags %v, want raw and compressed bodies both", tags)
			}
		})
	}
}

// A Prepared keeps the events' fields as they were when prepared, and refuses to append Data
// changed since; once they are back as they were it appends them, and appended again it is a
// repeat, as a batch appended again is.
func TestPreparedRefusesChangedData(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	evs := preparedMix(t, "kept")
	p, err := Prepare(task, evs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		evs[i].Turn, evs[i].Type = 99, events.TypeToolCall
	}
	evs[1].Origin.File, evs[1].Origin.Record = "another.jsonl", 99 // the caller's, reused
	long := evs[2].Data
	long[len(long)/2] ^= 1
	if _, err := db.AppendPrepared(context.Background(), 0, p); !errors.Is(err, ErrInvalidEvent) || !strings.Contains(err.Error(), "event #2") {
		t.Fatalf("event #2's data changed after Prepare: %v, want ErrInvalidEvent naming event #2", err)
	}
	if _, err := db.Head(task); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("a refused batch left the task with a head: %v", err)
	}
	long[len(long)/2] ^= 1
	first, err := db.AppendPrepared(context.Background(), 0, p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := db.AppendPrepared(context.Background(), first.Last, p)
	if err != nil || !again.Duplicate || again.First != 1 {
		t.Fatalf("the same Prepared again: %+v, %v; want a repeat of seq 1..%d", again, err, first.Last)
	}
	for i, ev := range collect(t, db, task, 1) {
		if ev.Turn != 1+i || ev.Type != events.TypeUserMessage || !bytes.Equal(ev.Data, evs[i].Data) {
			t.Errorf("event %d is stored as turn %d %s, want the prepared turn %d, a user message", i, ev.Turn, ev.Type, 1+i)
		}
		if i == 1 && (ev.Origin == nil || *ev.Origin != events.Origin{File: "session.jsonl", Record: 7}) {
			t.Errorf("event 1 is stored with origin %+v, want the prepared session.jsonl record 7", ev.Origin)
		}
	}
	if err := db.Verify(context.Background(), task); err != nil {
		t.Fatal(err)
	}
}

// Prepare refuses what Append refuses before a transaction, and AppendPrepared what Append
// refuses against the log.
func TestPrepareRefuses(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	evs := preparedMix(t, "refused")
	twice := append(evs[:2:2], evs[0])
	noType := preparedMix(t, "untyped")
	noType[1].Type = ""
	for _, c := range []struct {
		name string
		task uuid.UUID
		evs  []events.Event
		want error
	}{
		{"no events", task, nil, ErrInvalidEvent},
		{"the nil task", uuid.Nil, evs, ErrInvalidEvent},
		{"an id twice", task, twice, ErrDuplicateID},
		{"an event without a type", task, noType, ErrInvalidEvent},
	} {
		if _, err := Prepare(c.task, c.evs); !errors.Is(err, c.want) {
			t.Errorf("%s: Prepare says %v, want %v", c.name, err, c.want)
		}
	}
	for name, p := range map[string]*Prepared{"nil": nil, "zero": {}} {
		if _, err := db.AppendPrepared(context.Background(), 0, p); !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("AppendPrepared of a %s Prepared says %v, want ErrInvalidEvent", name, err)
		}
	}
	if tasks, err := db.Tasks(); err != nil || len(tasks) != 0 {
		t.Fatalf("the refused batches left tasks %v (%v)", tasks, err)
	}
	p, err := Prepare(task, evs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendPrepared(context.Background(), 3, p); !errors.Is(err, ErrVersionConflict) {
		t.Errorf("appended at version 3 of a new task: %v, want ErrVersionConflict", err)
	}
	mustAppend(t, db, task, 0, evs[1])
	if _, err := db.AppendPrepared(context.Background(), 1, p); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("a batch one of whose ids is stored: %v, want ErrDuplicateID", err)
	}
	if n := len(collect(t, db, task, 1)); n != 1 {
		t.Errorf("%d events stored after the refusals, want 1", n)
	}
}
