package agentlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heapPeak samples the live heap while f runs and returns the peak above the heap before it.
func heapPeak(f func()) uint64 {
	// The heap also holds garbage not collected yet, as much as the collector's pacing lets
	// build up, more when the machine is busy: collecting early keeps it small next to what f
	// keeps alive, which is what is measured.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

func largestSample(b testing.TB) (Agent, string) {
	return Pi, samplesDir(b, "sessions", "pi", "badlogic__pi-mono__packages__coding-agent__test__fixtures__large-session.jsonl")
}

// BenchmarkImportPiLarge imports the largest sample (pi large-session, ~1 MB); MB/s is from
// SetBytes, peak-heap-B is the most live heap seen above the heap before one import.
func BenchmarkImportPiLarge(b *testing.B) {
	agent, path := largestSample(b)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	imp := func() {
		if _, err := Import(agent, path, Options{}, func(Item) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	peak := heapPeak(imp) // measured once: the sampler would distort the timing
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		imp()
	}
	b.ReportMetric(float64(peak), "peak-heap-B")
}

// bigTranscript builds a Claude Code transcript of about size bytes with the payloads real ones
// carry: whole files in tool results (originalFile), long tool output and a base64 image.
func bigTranscript(size int) []byte {
	var buf bytes.Buffer
	file := strings.Repeat("line of source code in a file that was read and edited\n", 400) // ~22 KB
	image := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 20000)                              // ~480 KB
	enc := func(v any) {
		b, _ := json.Marshal(v)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	enc(map[string]any{"type": "user", "cwd": "/home/u/app", "timestamp": "2026-01-01T00:00:00Z",
		"message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "here is a screenshot, fix @src/a.ts"},
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "data": image}}}}})
	for i := 0; buf.Len() < size; i++ {
		id := fmt.Sprintf("t%d", i)
		enc(map[string]any{"type": "assistant", "cwd": "/home/u/app", "timestamp": "2026-01-01T00:00:01Z",
			"message": map[string]any{"model": "claude-opus-4-6", "id": fmt.Sprintf("m%d", i), "content": []any{
				map[string]any{"type": "tool_use", "id": id, "name": "Edit", "input": map[string]any{
					"file_path": fmt.Sprintf("/home/u/app/src/f%d.ts", i%50), "old_string": file[:2000], "new_string": file[:3000]}}}}})
		enc(map[string]any{"type": "user", "cwd": "/home/u/app", "timestamp": "2026-01-01T00:00:02Z",
			"message":       map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": file}}},
			"toolUseResult": map[string]any{"filePath": "x", "originalFile": file, "structuredPatch": []any{}}})
	}
	return buf.Bytes()
}

// TestImportMemoryBounded imports a 3 MB transcript and checks the live heap never grows by more
// than a few times the file's size: records are streamed, not slurped.
func TestImportMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("memory measurement")
	}
	data := bigTranscript(3 << 20)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	data = nil
	var rep Report
	peak := heapPeak(func() {
		var err error
		rep, err = Import(ClaudeCode, path, Options{}, func(Item) error { return nil })
		if err != nil {
			t.Error(err)
		}
	})
	st, _ := os.Stat(path)
	t.Logf("%d bytes, %d records, %d turns: peak heap +%d bytes (%.2f× the file)", st.Size(), rep.Records, rep.Turns, peak, float64(peak)/float64(st.Size()))
	if peak > 3*uint64(st.Size()) {
		t.Errorf("peak heap grew by %d bytes for a %d-byte transcript; want at most 3× its size", peak, st.Size())
	}
}
