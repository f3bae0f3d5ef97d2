package store

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// A commit writes its keys and values in the memory the commit before it used: what every
// earlier commit wrote must read back unchanged, whether the next commit is smaller, larger
// (the memory grows in the middle of a transaction) or for another task.
func TestCommitsShareNoBytes(t *testing.T) {
	db := openTest(t)
	tasks := []uuid.UUID{uuid.New(), uuid.New()}
	heads := make([]uint64, len(tasks))
	want := map[uuid.UUID][][]byte{}
	sizes := []int{5000, 10, 300, 70000, 1, 2000, 2000, 40, 150000, 3}
	for i, size := range sizes {
		task := i % len(tasks)
		evs := msgs(t, 1+i%3, strings.Repeat(string(rune('a'+i)), size))
		a := mustAppend(t, db, tasks[task], heads[task], evs...)
		heads[task] = a.Last
		for _, ev := range evs {
			want[tasks[task]] = append(want[tasks[task]], bytes.Clone(ev.Data))
		}
		for _, id := range tasks[:min(i+1, len(tasks))] {
			got := collect(t, db, id, 1)
			if len(got) != len(want[id]) {
				t.Fatalf("after commit %d, task %s reads %d events, want %d", i, id, len(got), len(want[id]))
			}
			for j, ev := range got {
				if !bytes.Equal(ev.Data, want[id][j]) {
					t.Fatalf("after commit %d, task %s event %d reads %.40q, want %.40q", i, id, j+1, ev.Data, want[id][j])
				}
			}
			if err := db.Verify(context.Background(), id); err != nil {
				t.Fatalf("after commit %d: %v", i, err)
			}
		}
	}
}
