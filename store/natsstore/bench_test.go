package natsstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/internal/mix"
)

var benchIDs = events.NewIDSource(nil)

// benchEvent is a realistic single event, the one store's benchmarks append: a tool call
// reading a file.
func benchEvent(b testing.TB, i int) events.Event {
	ev, err := events.New(&events.ToolCall{
		Tool:   "read_file",
		ID:     fmt.Sprintf("toolu_%08d", i),
		Params: json.RawMessage(fmt.Sprintf(`{"path":"apps/web/src/components/Button%d.tsx"}`, i)),
	})
	if err != nil {
		b.Fatal(err)
	}
	ev.Time = time.Date(2025, 3, 1, 12, 0, 0, i, time.UTC)
	if ev.ID, err = benchIDs.New(ev.Time); err != nil {
		b.Fatal(err)
	}
	ev.Turn = 1 + i/20
	return ev
}

// benchStores opens the stores compared: JetStream in-process with every write synced (on disk
// in a temporary directory), and the bbolt file with its default, durable options.
var benchStores = []struct {
	name string
	open func(b *testing.B) store.Store
}{
	{"nats", func(b *testing.B) store.Store { return openStore(b, startServer(b), nil) }},
	{"bbolt", func(b *testing.B) store.Store {
		db, err := store.Open(filepath.Join(b.TempDir(), "tasks.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}},
}

// BenchmarkDurableAppend appends single events durably from 1, 8 and 64 writers, each on its own
// task, and batches of 10 from one writer, reporting events/s and the latency of one append.
func BenchmarkDurableAppend(b *testing.B) {
	type shape struct{ writers, batch int }
	for _, sh := range []shape{{1, 1}, {8, 1}, {64, 1}, {1, 10}} {
		for _, bs := range benchStores {
			b.Run(fmt.Sprintf("%s/writers=%d/batch=%d", bs.name, sh.writers, sh.batch), func(b *testing.B) {
				durableAppend(b, bs.open(b), sh.writers, sh.batch)
			})
		}
	}
}

// BenchmarkAppendLongTask appends single events durably from one writer to a task that already
// holds 0, 10,000 or 100,000 events, in each layout of a JetStream stream and in bbolt, and
// reports the median latency of one append; with nats-server installed, on a stream of three
// replicas (each server syncing every write) as well. Layout 1 checks an append's expected last subject
// sequence on the task's subject filter, which matches a subject per event of the task; layouts
// 2 and 3 check it on the task's one log subject.
func BenchmarkAppendLongTask(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"nats-layout1", func(b *testing.B) store.Store { return openStore(b, startServer(b), &Options{layout: Layout1}) }},
		{"nats-layout2", func(b *testing.B) store.Store { return openStore(b, startServer(b), &Options{layout: Layout2}) }},
		{"nats-layout3", func(b *testing.B) store.Store { return openStore(b, startServer(b), &Options{layout: Layout3}) }},
		benchStores[1],
	}
	// With nats-server installed, a stream of three replicas on three processes as well.
	if bin := natsServerBinary(); bin != "" {
		top := b
		var c *binaryCluster
		for _, layout := range layouts {
			stores = append(stores, struct {
				name string
				open func(b *testing.B) store.Store
			}{fmt.Sprintf("r3-layout%d", layout), func(b *testing.B) store.Store {
				if c == nil {
					c = startBinaryCluster(top, bin, 3, true)
				}
				return openCluster(b, c, fmt.Sprintf("LONG%d?layout=%d", streams.Add(1), layout), 3)
			}})
		}
	}
	for _, n := range []int{0, 10_000, 100_000} {
		for _, bs := range stores {
			b.Run(fmt.Sprintf("%s/events=%d", bs.name, n), func(b *testing.B) {
				s := bs.open(b)
				task := uuid.New()
				evs := make([]events.Event, n+b.N)
				for i := range evs {
					evs[i] = benchEvent(b, i)
				}
				for i := 0; i < n; i += 1000 {
					if _, err := s.Append(context.Background(), task, uint64(i), evs[i:i+1000]...); err != nil {
						b.Fatal(err)
					}
				}
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					start := time.Now()
					if _, err := s.Append(context.Background(), task, uint64(n+i), evs[n+i]); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			})
		}
	}
}

// BenchmarkServerBatch publishes n single-event messages to n tasks, one after another, as a
// lone message (n=1) or one atomic batch, as Append's shared publishes do, and reports the time
// the server takes for one publish and its messages per second. On a single server syncing
// every write, the time of a batch less n times the per-message cost is the batch's fixed cost.
func BenchmarkServerBatch(b *testing.B) {
	for _, n := range []int{1, 2, 16, 64, 256} {
		b.Run(fmt.Sprint("messages=", n), func(b *testing.B) {
			s := openStore(b, startServer(b), nil)
			tasks := make([]uuid.UUID, n)
			for i := range tasks {
				tasks[i] = uuid.New()
			}
			b.ReportAllocs()
			for it := range b.N {
				b.StopTimer()
				// A new event each round, on a subject of its own, without the expected
				// subject sequence: the server's cost of the publish alone.
				msgs, err := serverBatch(b, s, tasks, it)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := s.send(context.Background(), msgs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/publish")
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkServerBatchSharded is BenchmarkServerBatch's 64 messages spread over 1, 2, 4 or 8
// streams of one server, each stream's share an atomic batch published at the same time as the
// others': whether appends shared among several streams would go faster than in one.
func BenchmarkServerBatchSharded(b *testing.B) {
	const total = 64
	for _, k := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprint("streams=", k), func(b *testing.B) {
			srv := startServer(b)
			stores := make([]*Store, k)
			for i := range stores {
				stores[i] = openStore(b, srv, nil)
			}
			per := total / k
			var wg sync.WaitGroup
			b.ResetTimer()
			for si := range k {
				wg.Go(func() {
					s := stores[si]
					tasks := make([]uuid.UUID, per)
					for i := range tasks {
						tasks[i] = uuid.New()
					}
					for it := range b.N {
						msgs, err := serverBatch(b, s, tasks, it)
						if err == nil {
							_, err = s.send(context.Background(), msgs)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N*total)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// serverBatch makes a new event on each task's subject, without the expected subject sequence:
// what the server stores, not what it checks.
func serverBatch(b *testing.B, s *Store, tasks []uuid.UUID, round int) ([]*nats.Msg, error) {
	msgs := make([]*nats.Msg, len(tasks))
	for i, task := range tasks {
		ev := benchEvent(b, i)
		var err error
		if ev.ID, err = benchIDs.New(ev.Time); err != nil {
			return nil, err
		}
		h := head{seq: uint64(round)}
		m, err := s.prepare(context.Background(), task, h, seal(task, h, []events.Event{ev}))
		if err != nil {
			return nil, err
		}
		ev0 := m[len(m)-1] // the event's message, not its id marker
		ev0.Header.Del("Nats-Expected-Last-Subject-Sequence")
		ev0.Header.Del("Nats-Expected-Last-Subject-Sequence-Subject")
		msgs[i] = ev0
	}
	return msgs, nil
}

// BenchmarkRead streams a 100k-event task from each store, decoding envelopes.
func BenchmarkRead(b *testing.B) {
	const n, batch = 100_000, 1000
	task := uuid.New()
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = benchEvent(b, i)
	}
	srv := startServer(b)
	url := startListeningServer(b)
	for _, bs := range []struct {
		name string
		open func() store.Store
	}{
		{"nats-inprocess", func() store.Store { return openStore(b, srv, nil) }},
		{"nats-tcp", func() store.Store {
			s, err := Open(url+"/READ", nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
		{"bbolt", func() store.Store {
			db, err := store.Open(filepath.Join(b.TempDir(), "tasks.db"), &store.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return db
		}},
	} {
		s := bs.open()
		for i := 0; i < n; i += batch {
			if _, err := s.Append(context.Background(), task, uint64(i), evs[i:i+batch]...); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(bs.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got := 0
				for _, err := range s.Events(context.Background(), task, 1) {
					if err != nil {
						b.Fatal(err)
					}
					got++
				}
				if got != n {
					b.Fatalf("read %d events, want %d", got, n)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkR3 compares, in one run, a stream of three replicas on three nats-server processes
// on 127.0.0.1 (each syncing every write, or every two minutes: sync=2m) with the bbolt file:
// durable appends of single events from 1, 8 and 64 writers, each on its own task, and a read
// of a 100,000-event task. It needs nats-server (go install
// github.com/nats-io/nats-server/v2@v2.15.2) and skips without it.
func BenchmarkR3(b *testing.B) {
	bin := natsServerBinary()
	if bin == "" {
		b.Skip("nats-server is not installed (go install github.com/nats-io/nats-server/v2@v2.15.2)")
	}
	top := b // the clusters run for the whole benchmark
	clusters := map[bool]*binaryCluster{}
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		benchStores[1],
	}
	for _, always := range []bool{true, false} {
		name := "r3-sync=always"
		if !always {
			name = "r3-sync=2m"
		}
		stores = append(stores, struct {
			name string
			open func(b *testing.B) store.Store
		}{name, func(b *testing.B) store.Store {
			if clusters[always] == nil {
				clusters[always] = startBinaryCluster(top, bin, 3, always)
			}
			return openCluster(b, clusters[always], fmt.Sprintf("R3B%d", streams.Add(1)), 3)
		}})
	}
	for _, writers := range []int{1, 8, 64} {
		for _, bs := range stores {
			b.Run(fmt.Sprintf("append/%s/writers=%d", bs.name, writers), func(b *testing.B) {
				durableAppend(b, bs.open(b), writers, 1)
			})
		}
	}
	const n = 100_000
	task := uuid.New()
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = benchEvent(b, i)
	}
	for _, bs := range stores {
		b.Run("read/"+bs.name, func(b *testing.B) {
			s := bs.open(b)
			for i := 0; i < n; i += 500 {
				if _, err := s.Append(context.Background(), task, uint64(i), evs[i:i+500]...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				got := 0
				for _, err := range s.Events(context.Background(), task, 1) {
					if err != nil {
						b.Fatal(err)
					}
					got++
				}
				if got != n {
					b.Fatalf("read %d events, want %d", got, n)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// durableAppend appends b.N batches of size events from writers goroutines, each on its own
// task, and reports events/s and the latency of one append.
func durableAppend(b *testing.B, s store.Store, writers, size int) {
	sh := struct{ writers, batch int }{writers, size}
	per := (b.N + sh.writers - 1) / sh.writers
	evs := make([][]events.Event, sh.writers)
	for w := range evs {
		evs[w] = make([]events.Event, per*sh.batch)
		for i := range evs[w] {
			evs[w][i] = benchEvent(b, i)
		}
	}
	lat := make([][]time.Duration, sh.writers)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range sh.writers {
		wg.Go(func() {
			task := uuid.New()
			lat[w] = make([]time.Duration, 0, per)
			for i := range per {
				batch := evs[w][i*sh.batch : (i+1)*sh.batch]
				start := time.Now()
				if _, err := s.Append(context.Background(), task, uint64(i*sh.batch), batch...); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(start))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(per*sh.writers*sh.batch)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkDiskUsageRealistic writes 5,000 events of a realistic recorded mix (mix.Realistic:
// one event in a hundred a decision) to a stream of layout 3 (and, to compare, of layout 2) in
// the small appends hooks make (one to three events each), records compressed (today's form)
// and, in layout 3, uncompressed (as before), and reports per event the bytes JetStream counts
// for the stream and its object stores (each message with its subject and headers) and the
// bytes of the server's store folder on disk, with the ratio of the stream's bytes to the
// payload bytes. The streams are named T1, T2, ...: five bytes shorter than TASKLOG in every
// subject (BenchmarkPackingEstimate counts with TASKLOG).
func BenchmarkDiskUsageRealistic(b *testing.B) {
	const n = 5_000
	evs, payload := mix.Realistic(b, n)
	for _, tc := range []struct {
		layout     int
		compressed bool
	}{{Layout3, true}, {Layout3, false}, {Layout2, true}} {
		name := fmt.Sprintf("layout%d/compressed", tc.layout)
		if !tc.compressed {
			name = fmt.Sprintf("layout%d/uncompressed", tc.layout)
		}
		b.Run(name, func(b *testing.B) {
			var inUse, onDisk int64
			for b.Loop() {
				dir := b.TempDir()
				s := openStore(b, startServerIn(b, dir), &Options{layout: tc.layout})
				s.noCompress = !tc.compressed
				task := uuid.New()
				appendAsHooks(b, s, task, evs)
				inUse = streamBytes(b, s)
				onDisk = dirBytes(b, dir)
			}
			b.ReportMetric(float64(inUse)/n, "inuse-B/event")
			b.ReportMetric(float64(onDisk)/n, "disk-B/event")
			b.ReportMetric(float64(payload)/n, "payload-B/event")
			b.ReportMetric(float64(inUse)/float64(payload), "inuse/payload")
		})
	}
}

// appendAsHooks appends evs to a new task one to three at a time, as hooks append them.
func appendAsHooks(tb testing.TB, s *Store, task uuid.UUID, evs []events.Event) {
	tb.Helper()
	for i, k := 0, 0; i < len(evs); k++ {
		j := min(len(evs), i+1+k%3)
		mustAppend(tb, s, task, uint64(i), evs[i:j]...)
		i = j
	}
}

// streamBytes is what JetStream counts for s's stream and its object stores.
func streamBytes(b *testing.B, s *Store) int64 {
	var total int64
	for name := range s.js.StreamNames(context.Background()).Name() {
		st, err := s.js.Stream(context.Background(), name)
		if err != nil {
			b.Fatal(err)
		}
		info, err := st.Info(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		total += int64(info.State.Bytes)
	}
	return total
}

// dirBytes is the size of the files under dir.
func dirBytes(b *testing.B, dir string) int64 {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}
