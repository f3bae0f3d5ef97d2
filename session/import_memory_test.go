package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// writeBigExport writes an export of about size bytes: task_started, then tool calls of about
// 1 KB each, then the closing line. It returns the path and the largest line's length.
func writeBigExport(t testing.TB, size int) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	task := uuid.MustParse("b16b16b1-0000-4000-8000-000000000001")
	ids := events.NewIDSource(strings.NewReader(strings.Repeat("entropy!", 1<<20)))
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var prev events.Hash
	written, longest := 0, 0
	add := func(p events.Payload) events.Event {
		ev, err := events.New(p)
		if err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Millisecond)
		ev.Task, ev.Turn, ev.Time = task, 1, at
		if ev.ID, err = ids.New(at); err != nil {
			t.Fatal(err)
		}
		ev.Seq++
		return ev
	}
	var seq uint64
	emit := func(ev events.Event) {
		seq++
		ev.Seq = seq
		ev.Seal(prev)
		prev = ev.Hash
		line, err := events.MarshalJSONLine(ev)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(append(line, '\n'))
		written += len(line) + 1
		longest = max(longest, len(line))
	}
	emit(add(&events.TaskStarted{Roots: []string{"/ws"}}))
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 30)
	for i := 0; written < size; i++ {
		params, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("src/pkg%d/file%d.go", i%97, i), "content": filler})
		emit(add(&events.ToolCall{Tool: "write_to_file", ID: fmt.Sprintf("call_%d", i), Params: params}))
	}
	end, _ := events.MarshalEndLine(events.End{Task: task, Events: seq, Last: prev})
	w.Write(append(end, '\n'))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path, longest
}

// peakHeap runs f and returns the most heap it saw allocated (runtime.MemStats.HeapAlloc: live
// objects and those not yet swept) above what was allocated before, sampled every millisecond
// through runtime/metrics, which does not stop the world as ReadMemStats does.
func peakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := heap()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, heap())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}

func importBig(t testing.TB, path string) []Imported {
	db, err := store.Open(filepath.Join(t.TempDir(), "big.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got, err := Import(context.Background(), db, in, filepath.Base(path), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Import streams: its heap stays a bounded batch plus a few lines whatever the file's size (it
// used to hold about 30 times the file: 180 MB here). BenchmarkImport measures a 50 MB file.
func TestImportHeapIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and imports a 6 MB log")
	}
	const size = 6 << 20
	path, longest := writeBigExport(t, size)
	var got []Imported
	peak := peakHeap(func() { got = importBig(t, path) })
	if len(got) != 1 || !got[0].Closed || got[0].Appended != got[0].Events {
		t.Fatalf("import = %+v", got)
	}
	// A batch holds at most 4 MiB of data, the store's write transaction a copy of it, and the
	// garbage collector lets the heap grow to twice what is live.
	const bound = 32 << 20
	t.Logf("peak heap %.1f MB importing %d MB (%d events, longest line %d bytes)", float64(peak)/(1<<20), size>>20, got[0].Events, longest)
	if peak > bound {
		t.Errorf("peak heap %d MB importing a %d MB file, over %d MB", peak>>20, size>>20, bound>>20)
	}
}

// BenchmarkImport imports generated exports of 6 and 50 MB and reports the peak heap, which
// does not grow with the file.
func BenchmarkImport(b *testing.B) {
	for _, mb := range []int{6, 50} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			path, _ := writeBigExport(b, mb<<20)
			b.ResetTimer()
			var peak uint64
			for range b.N {
				peak = max(peak, peakHeap(func() { importBig(b, path) }))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.SetBytes(int64(mb) << 20)
		})
	}
}

// cancelAt is a file that cancels a context once its second read has passed an offset: an
// import interrupted while it writes.
type cancelAt struct {
	*os.File
	reads  int
	at     int64
	pos    int64
	cancel context.CancelFunc
}

func (c *cancelAt) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekStart {
		c.reads++
		c.pos = off
	}
	return c.File.Seek(off, whence)
}

func (c *cancelAt) Read(p []byte) (int, error) {
	n, err := c.File.Read(p)
	c.pos += int64(n)
	if c.reads == 1 && c.pos > c.at {
		c.cancel()
	}
	return n, err
}

// An import stopped while it writes leaves a sound prefix, says how far it got, and the same
// file imported again completes the task.
func TestInterruptedImportLeavesASoundPrefix(t *testing.T) {
	path, _ := writeBigExport(t, 3<<20) // about 2,500 events: three batches
	db := openDB(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Import(ctx, db, &cancelAt{File: f, at: 2 << 20, cancel: cancel}, "big.jsonl", ImportOptions{})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the database holds seq 1 to "+strconv.Itoa(maxImportBatch)+" of it, a sound prefix") {
		t.Fatalf("err = %v, want an interruption after the first batch", err)
	}
	tasks, _ := db.Tasks()
	if len(tasks) != 1 || tasks[0].Events != maxImportBatch {
		t.Fatalf("after the interruption the database holds %+v, want the first batch of %d events", tasks, maxImportBatch)
	}
	if err := db.Verify(context.Background(), tasks[0].Task); err != nil {
		t.Errorf("the prefix does not verify: %v", err)
	}
	f.Seek(0, io.SeekStart)
	got, err := Import(context.Background(), db, f, "big.jsonl", ImportOptions{})
	if err != nil || got[0].Appended != got[0].Events-maxImportBatch || !got[0].Closed {
		t.Fatalf("import again: %+v, %v; want the rest appended", got, err)
	}
	var out bytes.Buffer
	if err := Export(context.Background(), db, got[0].Task, &out); err != nil {
		t.Fatal(err)
	}
	if want, _ := os.ReadFile(path); !bytes.Equal(out.Bytes(), want) {
		t.Errorf("the completed task does not export as the file")
	}
}
