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

// Import streams: its heap stays a bounded batch plus a few lines whatever the file's size, but
// for the ids of the task it reads, a few dozen bytes each (it used to hold about 30 times the
// file: 180 MB here). BenchmarkImport measures a 50 MB file.
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
// grows with the file only by its task's ids.
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

// atBatch is a store that, when the import hands it batch number cancelAt, cancels the
// import's context, and refuses batch number failAt with fail: an import interrupted while it
// writes, or a write that fails. It counts the batches it is handed.
type atBatch struct {
	store.Store
	appends  int
	cancelAt int
	cancel   context.CancelFunc
	failAt   int
	fail     error
}

func (c *atBatch) Append(ctx context.Context, task uuid.UUID, expected uint64, evs ...events.Event) (store.Appended, error) {
	c.appends++
	if c.appends == c.cancelAt {
		c.cancel()
	}
	if c.appends == c.failAt {
		return store.Appended{}, c.fail
	}
	return c.Store.Append(ctx, task, expected, evs...)
}

// rewritten is a file that reads as its first content until it is rewound, then as again: a
// file rewritten between the two reads of an import.
type rewritten struct {
	r     *bytes.Reader
	again []byte
}

func (f *rewritten) Read(p []byte) (int, error) { return f.r.Read(p) }

func (f *rewritten) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekStart && f.again != nil {
		f.r, f.again = bytes.NewReader(f.again), nil
	}
	return f.r.Seek(off, whence)
}

// withLineChanged returns data with one tool call's id changed on line no, which breaks that
// line's hash.
func withLineChanged(t *testing.T, data []byte, no int) []byte {
	t.Helper()
	lines := bytes.Split(data, []byte("\n"))
	if !bytes.Contains(lines[no-1], []byte(`call_`)) {
		t.Fatalf("line %d holds no tool call: %.80s", no, lines[no-1])
	}
	lines[no-1] = bytes.Replace(lines[no-1], []byte(`call_`), []byte(`cull_`), 1)
	return bytes.Join(lines, []byte("\n"))
}

// The second pass writes a batch while it checks the lines after it. What the import reports
// is the first fault in the order of the file, and the database holds every batch before it
// and nothing after.
func TestImportStopsAtTheFirstFault(t *testing.T) {
	path, _ := writeBigExport(t, 3<<20) // about 2,500 events: three batches
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	diskFull := errors.New("no space left on device")
	for _, c := range []struct {
		name    string
		failAt  int // the batch the store refuses, 0 for none
		changed int // the line the file has changed on when it is read again, 0 for none
		want    []string
		is      error
		held    int
	}{
		{name: "the second batch's write fails", failAt: 2, is: diskFull, held: maxImportBatch,
			want: []string{"write seq 1001 to 2000", "the database holds seq 1 to 1000 of it, a sound prefix"}},
		{name: "a line of the second batch changed", changed: 1500, held: maxImportBatch,
			want: []string{"big.jsonl:1281: the file is not as the first read checked it: the lines from this one on differ", "the file changed while it was imported; the database holds seq 1 to 1000 of task b16b16b1-0000-4000-8000-000000000001, a sound prefix"}},
		// The second read takes chunks of 256 lines whole or not at all: a change is a fault
		// at its chunk's first line (1025 and 2049 here, after the batch that fails).
		{name: "the first batch's write fails, a line after it changed", failAt: 1, changed: 1100, is: diskFull,
			want: []string{"write seq 1 to 1000", "nothing of the task was written"}},
		{name: "the second batch's write fails, a line after it changed", failAt: 2, changed: 2100, is: diskFull, held: maxImportBatch,
			want: []string{"write seq 1001 to 2000", "the database holds seq 1 to 1000"}},
		{name: "a line changed in the chunk the first batch ends in", changed: 1010,
			want: []string{"big.jsonl:769: the file is not as the first read checked it: the lines from this one on differ", "the file changed while it was imported; nothing of task b16b16b1-0000-4000-8000-000000000001 was written"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t)
			in := &rewritten{r: bytes.NewReader(data), again: data}
			if c.changed != 0 {
				in.again = withLineChanged(t, data, c.changed)
			}
			faults := &atBatch{Store: db, failAt: c.failAt, fail: diskFull}
			_, err := Import(context.Background(), faults, in, "big.jsonl", ImportOptions{})
			if err == nil || c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("err = %v, want %v", err, c.is)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to say %q", err, w)
				}
			}
			if c.failAt != 0 && faults.appends != c.failAt {
				t.Errorf("the store was handed %d batches; after batch %d failed, it should be handed none", faults.appends, c.failAt)
			}
			tasks, _ := db.Tasks()
			held := 0
			if len(tasks) > 0 {
				held = int(tasks[0].Events)
				if err := db.Verify(context.Background(), tasks[0].Task); err != nil {
					t.Errorf("what was written does not verify: %v", err)
				}
			}
			if held != c.held {
				t.Errorf("the database holds %d events, want %d", held, c.held)
			}
		})
	}
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
	_, err = Import(ctx, &atBatch{Store: db, cancelAt: 2, cancel: cancel}, f, "big.jsonl", ImportOptions{})
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
