package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

func TestEventsFromAnySequence(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	const n = 2*chunkSize + 100
	for i := uint64(0); i < n; i += 100 {
		mustAppend(t, db, task, i, msgs(t, int(min(100, n-i)), "read")...)
	}
	for _, from := range []uint64{0, 1, 2, chunkSize - 1, chunkSize, chunkSize + 1, 2 * chunkSize, n, n + 1, 10 * n} {
		got := collect(t, db, task, from)
		want := n - max(from, 1) + 1
		if max(from, 1) > n {
			want = 0
		}
		if uint64(len(got)) != want {
			t.Errorf("from %d: %d events, want %d", from, len(got), want)
			continue
		}
		for i, ev := range got {
			if ev.Seq != max(from, 1)+uint64(i) {
				t.Errorf("from %d: event %d has seq %d", from, i, ev.Seq)
				break
			}
		}
	}
	// Breaking out of the loop stops the stream.
	seen := 0
	for _, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if seen++; seen == 3 {
			break
		}
	}
	if seen != 3 {
		t.Errorf("saw %d events", seen)
	}
}

func TestEventsUnknownTask(t *testing.T) {
	db := openTest(t)
	for _, err := range db.Events(context.Background(), uuid.New(), 1) {
		if !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("error %v, want ErrTaskNotFound", err)
		}
		return
	}
	t.Error("the stream of an unknown task was empty, without an error")
}

// If Events held a read transaction while the loop body ran, a write that grows the file would
// wait forever for it to end (bbolt remaps the file under a lock every reader holds), and so
// would Close. Both are done inside the loop here, with a watchdog.
func TestEventsHoldNoTransactionDuringLoopBody(t *testing.T) {
	path := t.TempDir() + "/tasks.db"
	db := openAt(t, path, &Options{NoSync: true})
	// The big event must take room in the file: kept uncompressed.
	db.noCompress = true
	task := uuid.New()
	mustAppend(t, db, task, 0, msgs(t, chunkSize+10, "before")...)
	st, _ := os.Stat(path)
	sizeBefore := st.Size()

	big := msg(t, 1, strings.Repeat("grow the file ", 8<<10))
	done := make(chan error, 1)
	go func() {
		seen := 0
		for ev, err := range db.Events(context.Background(), task, 1) {
			if err != nil {
				done <- err
				return
			}
			if seen++; ev.Seq != uint64(seen) {
				done <- fmt.Errorf("event %d of the stream is seq %d", seen, ev.Seq)
				return
			}
			if ev.Seq%64 == 0 && ev.Seq <= chunkSize+10 {
				e := msg(t, 1, strings.Repeat("grow the file ", 8<<10))
				h, _ := db.Head(task)
				if _, err := db.Append(context.Background(), task, h.Seq, e); err != nil {
					done <- err
					return
				}
			}
		}
		// Events appended during the stream may or may not be streamed (it ends where it
		// finds the log's end); those there when it began are.
		if most := chunkSize + 10 + (chunkSize+10)/64; seen < chunkSize+10 || seen > most {
			t.Errorf("streamed %d events, want the %d there when it began and at most the %d appended during it",
				seen, chunkSize+10, most-chunkSize-10)
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("appending inside the loop body hangs: Events holds a read transaction")
	}
	st, _ = os.Stat(path)
	if st.Size() <= sizeBefore+int64(len(big.Data)) {
		t.Errorf("file grew from %d to %d bytes only; the test did not force a remap", sizeBefore, st.Size())
	}

	closed := make(chan error, 1)
	go func() {
		for _, err := range db.Events(context.Background(), task, 1) {
			if err != nil {
				closed <- err
				return
			}
			closed <- db.Close()
			return
		}
	}()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close inside the loop body hangs: Events holds a read transaction")
	}
}

func TestEventsReportUndecodableValue(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	mustAppend(t, db, task, 0, msgs(t, 5, "ok")...)
	rawUpdate(t, db, func(tx *bolt.Tx) error {
		return tx.Bucket(task[:]).Put(uint64ToBytes(3), []byte{1, 0, 1, 2, 3})
	})
	db = openAt(t, db.Path(), &Options{NoSync: true})
	var seqs []uint64
	var got error
	for ev, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			got = err
			break
		}
		seqs = append(seqs, ev.Seq)
	}
	if !slices.Equal(seqs, []uint64{1, 2}) {
		t.Errorf("streamed %v before the error, want [1 2]", seqs)
	}
	if !errors.Is(got, ErrCorrupt) || !strings.Contains(got.Error(), task.String()+": seq 3:") {
		t.Errorf("error %v does not name task and seq 3 as corrupt", got)
	}
}

func TestHeadAndTasks(t *testing.T) {
	db := openTest(t)
	if got, err := db.Tasks(); err != nil || len(got) != 0 {
		t.Fatalf("Tasks of an empty log = %v, %v", got, err)
	}
	if _, err := db.Head(uuid.New()); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("Head of unknown task: %v", err)
	}
	want := make([]TaskInfo, 5)
	for i := range want {
		task := uuid.New()
		n := 3 + i*7
		evs := msgs(t, n, "task")
		mustAppend(t, db, task, 0, evs...)
		want[i] = TaskInfo{Task: task, Events: uint64(n), LastTurn: evs[n-1].Turn}
	}
	slices.SortFunc(want, func(a, b TaskInfo) int { return strings.Compare(a.Task.String(), b.Task.String()) })
	got, err := db.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Tasks =\n%v\nwant\n%v", got, want)
	}
}
