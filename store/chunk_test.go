package store

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestChunkBytes: a read copies out records until their bytes reach chunkBytes, and goes on
// with the next chunk, not at the log's end. Events, Verify (and its look-up of ids) read the
// whole log however it is cut; a chunk holds a record larger than chunkBytes alone.
func TestChunkBytes(t *testing.T) {
	defer func(n int) { chunkBytes = n }(chunkBytes)
	chunkBytes = 2_000

	db := openTest(t)
	task := uuid.New()
	evs := msgs(t, 40, "short")
	evs[7] = msg(t, 1, strings.Repeat("a message longer than a chunk; ", 300))
	mustAppend(t, db, task, 0, evs[:20]...)
	mustAppend(t, db, task, 20, evs[20:]...)

	c, err := db.readChunk(task, 1, 0, chunkSize)
	if err != nil {
		t.Fatal(err)
	}
	if !c.more || len(c.seqs) >= len(evs) {
		t.Fatalf("the first chunk holds %d of %d records (more after it: %v): not cut at %d bytes", len(c.seqs), len(evs), c.more, chunkBytes)
	}
	for _, from := range []uint64{1, 7, 8, 9, 33, 40} {
		got := collect(t, db, task, from)
		if want := len(evs) - int(from) + 1; len(got) != want {
			t.Fatalf("Events from %d: %d events, want %d", from, len(got), want)
		}
		for i, ev := range got {
			if want := evs[int(from)-1+i].ID; ev.ID != want || ev.Seq != from+uint64(i) {
				t.Fatalf("Events from %d: #%d is seq %d id %s, want seq %d id %s", from, i, ev.Seq, ev.ID, from+uint64(i), want)
			}
		}
	}
	if err := db.Verify(context.Background(), task); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := db.idProblem(context.Background(), task, uint64(len(evs))); err != nil {
		t.Fatalf("the look-up of every id: %v", err)
	}
}
