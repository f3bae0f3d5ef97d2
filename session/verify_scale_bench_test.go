package session

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// batchSize is how many tool calls buildVerifyTask appends between two decisions.
const batchSize = 1_000

// buildVerifyTask writes a task of n events over the fifty-rule workspace without fsync: tool
// calls appended in batches of 1,000 through the session, each batch followed by a decision,
// so a million events carry a thousand decisions to recompute.
func buildVerifyTask(b *testing.B, n int) (store.Store, uuid.UUID) {
	b.Helper()
	ctx := context.Background()
	db := openDB(b)
	s := newSession(b, db, fiftyRules(b), Options{})
	defer s.Close()
	appendReads(b, s, n, batchSize, func() {
		if _, err := s.Decide(ctx); err != nil {
			b.Fatal(err)
		}
	})
	return db, s.Task()
}

// appendReads appends read_file tool calls through s, in batches of size, until the task holds
// n events, calling afterBatch (if not nil) after each batch.
func appendReads(b *testing.B, s *Session, n, size int, afterBatch func()) {
	b.Helper()
	ctx := context.Background()
	batch := make([]events.Event, 0, size)
	for i := 0; s.Version() < uint64(n); i++ {
		params := json.RawMessage(fmt.Sprintf(`{"path":"packages/pkg%02d/src/file%d.ts"}`, i%50, i%1000))
		ev, err := events.New(&events.ToolCall{Tool: "read_file", ID: fmt.Sprintf("toolu_%08d", i), Params: params})
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, ev)
		if len(batch) == cap(batch) || s.Version()+uint64(len(batch)) >= uint64(n) {
			if _, err := s.appendEvents(ctx, batch, 0); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
			if afterBatch != nil {
				afterBatch()
			}
		}
	}
}

// heapSampler records the largest live heap seen while it runs.
type heapSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func sampleHeap(every time.Duration) *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(s)
			h.peak = max(h.peak, s[0].Value.Uint64())
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// Stop ends the sampling and returns the peak in bytes.
func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	h.done.Wait()
	return h.peak
}

// BenchmarkVerifyMillion is 'replay verify' of a million-event task with a thousand decisions:
// the store's chain check beside every decision and delivery recomputed (Verify). It reports events per
// second, bytes allocated per event, the peak live heap (sampled every 5 ms), events per second
// of the process's CPU time (the figure a loaded machine moves least) and the median and 99th
// percentile of one whole verify (with -benchtime Nx, N verifies). Skipped with -short.
func BenchmarkVerifyMillion(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a million-event task; skipped with -short")
	}
	const n = 1_000_000
	ctx := context.Background()
	var total uint64
	db, task := buildVerifyTask(b, n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	heap := sampleHeap(5 * time.Millisecond)
	cpu0, cpuOK := processCPU()
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		rep, err := Verify(ctx, db, task)
		if err != nil || !rep.OK() {
			b.Fatal(err, rep.Changes)
		}
		if rep.Events < n || rep.Decisions < n/(batchSize+1) {
			b.Fatalf("%d events, %d decisions; want %d and one per %d", rep.Events, rep.Decisions, n, batchSize+1)
		}
		total = rep.Events
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	cpu1, _ := processCPU()
	peak := heap.Stop()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(total)/float64(b.N), "B/event")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	if cpuOK {
		b.ReportMetric(float64(total)*float64(b.N)/(cpu1-cpu0).Seconds(), "events/cpu-s")
	}
	reportPercentiles(b, took)
}
