package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/store"
)

// BenchmarkImportRealistic imports the export of the task BenchmarkVerifyRealistic verifies
// (100k events recorded as hooks record them, 1.2% decisions) into a new database without
// fsync, as 'replay import' does, and reports events per second of the wall clock and of the
// process's CPU time and the peak heap. Skipped with -short or without the samples.
func BenchmarkImportRealistic(b *testing.B) {
	if testing.Short() {
		b.Skip("builds and exports a 100k-event task; skipped with -short")
	}
	ctx := context.Background()
	db, task, _, _ := buildRealisticTask(b, 100_000)
	path := filepath.Join(b.TempDir(), "real.jsonl")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := Export(ctx, db, task, out); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	info, _ := os.Stat(path)
	var events int
	var peak uint64
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		to, err := store.Open(filepath.Join(b.TempDir(), "to.db"), &store.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		in, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		peak = max(peak, peakHeap(func() {
			got, err := Import(ctx, to, in, "real.jsonl", ImportOptions{})
			if err != nil || len(got) != 1 || !got[0].Closed || got[0].Appended != got[0].Events {
				b.Fatal(got, err)
			}
			events = got[0].Events
		}))
		b.StopTimer()
		in.Close()
		to.Close()
		b.StartTimer()
	}
	b.StopTimer()
	cpu1, _ := processCPU()
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if cpuOK {
		b.ReportMetric(float64(events)*float64(b.N)/(cpu1-cpu0).Seconds(), "events/cpu-s")
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.SetBytes(info.Size())
}
