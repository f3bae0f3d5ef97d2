package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/internal/mix"
)

// benchEvent is a realistic single event: a tool call reading a file.
func benchEvent(b *testing.B, i int) events.Event {
	ev, err := events.New(&events.ToolCall{
		Tool:   "read_file",
		ID:     fmt.Sprintf("toolu_%08d", i),
		Params: json.RawMessage(fmt.Sprintf(`{"path":"apps/web/src/components/Button%d.tsx"}`, i)),
	})
	if err != nil {
		b.Fatal(err)
	}
	ev.Time = time.Date(2025, 3, 1, 12, 0, 0, i, time.UTC)
	if ev.ID, err = testIDs.New(ev.Time); err != nil {
		b.Fatal(err)
	}
	ev.Turn = 1 + i/20
	return ev
}

// BenchmarkDurableAppend compares one fsynced single-event append through the store with the
// floor under it: a raw bbolt put of the same encoded bytes and a commit.
func BenchmarkDurableAppend(b *testing.B) {
	b.Run("tasklog", func(b *testing.B) {
		db := openAt(b, filepath.Join(b.TempDir(), "tasks.db"), nil)
		task := uuid.New()
		evs := make([]events.Event, b.N)
		for i := range evs {
			evs[i] = benchEvent(b, i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, err := db.Append(context.Background(), task, uint64(i), evs[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("bbolt-baseline", func(b *testing.B) {
		raw, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer raw.Close()
		task := uuid.New()
		err = raw.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(task[:]); return err })
		if err != nil {
			b.Fatal(err)
		}
		vals := make([][]byte, b.N)
		var prev events.Hash
		for i := range vals {
			ev := benchEvent(b, i)
			ev.Task, ev.Seq = task, uint64(i+1)
			ev.Seal(prev)
			prev = ev.Hash
			vals[i] = ev.AppendBinary(nil)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			err := raw.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(task[:]).Put(uint64ToBytes(uint64(i+1)), vals[i])
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// BenchmarkDurableAppendPaired alternates one store append and one raw bbolt put+commit of the
// same bytes, so both see the same disk and the same neighbours; on a shared machine that is the
// only fair comparison. It reports the median of each and their ratio.
func BenchmarkDurableAppendPaired(b *testing.B) {
	db := openAt(b, filepath.Join(b.TempDir(), "tasks.db"), nil)
	raw, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	task := uuid.New()
	if err := raw.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(task[:]); return err }); err != nil {
		b.Fatal(err)
	}
	evs := make([]events.Event, b.N)
	vals := make([][]byte, b.N)
	var prev events.Hash
	for i := range evs {
		evs[i] = benchEvent(b, i)
		ev := evs[i]
		ev.Task, ev.Seq = task, uint64(i+1)
		ev.Seal(prev)
		prev = ev.Hash
		vals[i] = ev.AppendBinary(nil)
	}
	store, bbolt := make([]time.Duration, b.N), make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		appendOne := func() {
			start := time.Now()
			if _, err := db.Append(context.Background(), task, uint64(i), evs[i]); err != nil {
				b.Fatal(err)
			}
			store[i] = time.Since(start)
		}
		putOne := func() {
			start := time.Now()
			err := raw.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(task[:]).Put(uint64ToBytes(uint64(i+1)), vals[i])
			})
			if err != nil {
				b.Fatal(err)
			}
			bbolt[i] = time.Since(start)
		}
		if i%2 == 0 {
			appendOne()
			putOne()
		} else {
			putOne()
			appendOne()
		}
	}
	b.StopTimer()
	ms, mb := median(store), median(bbolt)
	b.ReportMetric(float64(ms.Nanoseconds()), "tasklog-ns/append")
	b.ReportMetric(float64(mb.Nanoseconds()), "bbolt-ns/commit")
	b.ReportMetric(float64(ms)/float64(mb), "ratio")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkGroupCommit runs durable single-event appends from several goroutines, each on its own
// task; the committer shares transactions and fsyncs among them.
func BenchmarkGroupCommit(b *testing.B) {
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := openAt(b, filepath.Join(b.TempDir(), "tasks.db"), nil)
			per := (b.N + writers - 1) / writers
			evs := make([][]events.Event, writers)
			for w := range evs {
				evs[w] = make([]events.Event, per)
				for i := range evs[w] {
					evs[w][i] = benchEvent(b, i)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					task := uuid.New()
					for i, ev := range evs[w] {
						if _, err := db.Append(context.Background(), task, uint64(i), ev); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(per*writers)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(per*writers)/float64(db.commits.Load()), "events/commit")
		})
	}
}

// readFixture is one 100k-event task with a realistic mix of payloads, built once per run.
var readFixture struct {
	once    sync.Once
	dir     string
	path    string
	task    uuid.UUID
	n       int
	payload int
	err     error
}

func buildReadFixture(b *testing.B) {
	f := &readFixture
	f.once.Do(func() {
		if f.dir, f.err = os.MkdirTemp("", "tasklog-bench-"); f.err != nil {
			return
		}
		f.path, f.task, f.n = filepath.Join(f.dir, "tasks.db"), uuid.New(), 100_000
		// Building the fixture is not what is measured: no fsync.
		db, err := Open(f.path, &Options{NoSync: true})
		if err != nil {
			f.err = err
			return
		}
		defer db.Close()
		batch := make([]events.Event, 0, 1000)
		for i := range f.n {
			ev := mixedEvent(b, i)
			f.payload += len(ev.Data)
			if batch = append(batch, ev); len(batch) == cap(batch) {
				if _, f.err = db.Append(context.Background(), f.task, uint64(i+1-len(batch)), batch...); f.err != nil {
					return
				}
				batch = batch[:0]
			}
		}
	})
	if f.err != nil {
		b.Fatal(f.err)
	}
}

// mixedEvent cycles through the kinds of event a coding session records most.
func mixedEvent(b *testing.B, i int) events.Event {
	var p events.Payload
	switch i % 5 {
	case 0:
		p = &events.UserMessage{Text: fmt.Sprintf("please fix the failing test in apps/web/src/Button%d.test.tsx and keep the API", i)}
	case 1:
		p = &events.Mention{Path: fmt.Sprintf("/apps/web/src/Button%d.tsx", i)}
	case 2:
		p = &events.ToolCall{Tool: "read_file", ID: fmt.Sprintf("toolu_%08d", i),
			Params: json.RawMessage(fmt.Sprintf(`{"path":"apps/web/src/Button%d.tsx"}`, i))}
	case 3:
		p = &events.FileWrite{Path: fmt.Sprintf("apps/web/src/Button%d.tsx", i), Op: events.OpEdit}
	case 4:
		p = &events.TabSnapshot{Open: []string{"apps/web/src/Button.tsx", "README.md", "apps/web/package.json"},
			Visible: []string{"apps/web/src/Button.tsx"}}
	}
	ev, err := events.New(p)
	if err != nil {
		b.Fatal(err)
	}
	ev.Time = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	if ev.ID, err = testIDs.New(ev.Time); err != nil {
		b.Fatal(err)
	}
	ev.Turn = 1 + i/20
	return ev
}

// BenchmarkRead streams the 100k-event task, decoding envelopes only and then every payload too.
func BenchmarkRead(b *testing.B) {
	buildReadFixture(b)
	f := &readFixture
	db := openAt(b, f.path, &Options{ReadOnly: true})
	for _, payloads := range []bool{false, true} {
		name := "envelopes"
		if payloads {
			name = "payloads"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for ev, err := range db.Events(context.Background(), f.task, 1) {
					if err != nil {
						b.Fatal(err)
					}
					if payloads {
						if _, err := ev.Payload(); err != nil {
							b.Fatal(err)
						}
					}
					n++
				}
				if n != f.n {
					b.Fatalf("read %d events, want %d", n, f.n)
				}
			}
			b.ReportMetric(float64(b.N*f.n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkDiskUsage reports what the fixture costs on disk per event against its payload bytes.
func BenchmarkDiskUsage(b *testing.B) {
	buildReadFixture(b)
	f := &readFixture
	st, err := os.Stat(f.path)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
	}
	b.ReportMetric(float64(st.Size())/float64(f.n), "disk-B/event")
	b.ReportMetric(float64(f.payload)/float64(f.n), "payload-B/event")
}

// BenchmarkDiskUsageRealistic writes 20,000 events of mix.Realistic (a recorded
// session, one event in a hundred a decision) in the small appends hooks make (one to three
// events each), records in today's form (format 4), compressed whole (format 3's) and
// uncompressed (format 2's), and reports per event the bytes of the file's pages in use, the
// file's size and the payload bytes, and the ratio of bytes in use to payload bytes.
func BenchmarkDiskUsageRealistic(b *testing.B) {
	const n = 20_000
	evs, payload := mix.Realistic(b, n)
	for _, form := range []string{"compressed", "compressed-format3", "uncompressed"} {
		b.Run(form, func(b *testing.B) {
			var inUse, size int64
			var logs bolt.BucketStats
			for b.Loop() {
				db := openAt(b, filepath.Join(b.TempDir(), "tasks.db"), &Options{NoSync: true})
				db.noCompress = form == "uncompressed"
				db.wholeRecords = form == "compressed-format3"
				// Commits skip their fsync, but the file grows as a durable store's does.
				db.bolt.NoGrowSync = false
				inUse, size = writeHookSized(b, db, evs)
				logs = logStats(b, db)
				db.Close()
			}
			// What a leaf holds beside its records: a 16-byte page header, and for each record a
			// 16-byte element header and its 8-byte key.
			b.ReportMetric(float64(logs.LeafInuse-16*logs.LeafPageN-logs.KeyN*(16+8))/n, "record-B/event")
			b.ReportMetric(float64(logs.LeafPageN), "leaf-pages")
			b.ReportMetric(float64(logs.LeafOverflowN), "overflow-pages")
			b.ReportMetric(float64(inUse)/n, "inuse-B/event")
			b.ReportMetric(float64(size)/n, "file-B/event")
			b.ReportMetric(float64(payload)/n, "payload-B/event")
			b.ReportMetric(float64(inUse)/float64(payload), "inuse/payload")
		})
	}
}

// writeHookSized appends evs to a new task as appendHookSized does, and returns the bytes of
// the file's pages in use and the file's size.
func writeHookSized(b *testing.B, db *DB, evs []events.Event) (inUse, size int64) {
	appendHookSized(b, db, evs)
	return diskInUse(b, db)
}

// appendHookSized appends evs to a new task in appends of one, two and three events in turn,
// as hooks append, and returns the task.
func appendHookSized(b *testing.B, db *DB, evs []events.Event) uuid.UUID {
	task := uuid.New()
	for i, k := 0, 0; i < len(evs); k++ {
		j := min(len(evs), i+1+k%3)
		if _, err := db.Append(context.Background(), task, uint64(i), evs[i:j]...); err != nil {
			b.Fatal(err)
		}
		i = j
	}
	return task
}

// logStats adds up bbolt's statistics of the task logs' buckets (not their id indexes).
func logStats(b testing.TB, db *DB) bolt.BucketStats {
	var st bolt.BucketStats
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
			if isTaskBucket(name) {
				st.Add(bk.Stats())
			}
			return nil
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// diskInUse returns the bytes of db's pages in use (all pages below the high-water mark but the
// free and pending ones) and the file's size.
func diskInUse(b testing.TB, db *DB) (inUse, size int64) {
	err := db.bolt.View(func(tx *bolt.Tx) error {
		st := db.bolt.Stats()
		inUse = tx.Size() - int64(st.FreePageN+st.PendingPageN)*int64(db.bolt.Info().PageSize)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(db.path)
	if err != nil {
		b.Fatal(err)
	}
	return inUse, st.Size()
}

// BenchmarkCompressionPaired measures what compression costs an append and a read, against the
// same store writing uncompressed, on the realistic mix. "append" alternates one durable
// (fsynced) single-event append to a compressed file and one to an uncompressed file and
// reports the median of each and their ratio; "read" streams the same 20,000 events from each
// file in turn, and from a third whose records are compressed whole (format 3's form), and
// reports events per second of each.
func BenchmarkCompressionPaired(b *testing.B) {
	evs, _ := mix.Realistic(b, 20_000)
	b.Run("append", func(b *testing.B) {
		packed := openAt(b, filepath.Join(b.TempDir(), "packed.db"), nil)
		plain := openAt(b, filepath.Join(b.TempDir(), "plain.db"), nil)
		plain.noCompress = true
		task := uuid.New()
		tp, tu := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
		one := func(db *DB, i int, into *[]time.Duration) {
			start := time.Now()
			if _, err := db.Append(context.Background(), task, uint64(i), evs[i%len(evs)]); err != nil {
				b.Fatal(err)
			}
			*into = append(*into, time.Since(start))
		}
		for i := 0; b.Loop(); i++ {
			if i%len(evs) == 0 && i > 0 {
				task = uuid.New()
			}
			j := i % len(evs)
			if i%2 == 0 {
				one(packed, j, &tp)
				one(plain, j, &tu)
			} else {
				one(plain, j, &tu)
				one(packed, j, &tp)
			}
		}
		mp, mu := median(tp), median(tu)
		b.ReportMetric(float64(mp.Nanoseconds()), "compressed-ns/append")
		b.ReportMetric(float64(mu.Nanoseconds()), "uncompressed-ns/append")
		b.ReportMetric(float64(mp)/float64(mu), "ratio")
	})
	b.Run("read", func(b *testing.B) {
		// Today's form, uncompressed, and compressed whole as format 3 did.
		dbs := make([]*DB, 3)
		task := uuid.New()
		for i := range dbs {
			dbs[i] = openAt(b, filepath.Join(b.TempDir(), "tasks.db"), &Options{NoSync: true})
			dbs[i].noCompress = i == 1
			dbs[i].wholeRecords = i == 2
			for j := 0; j < len(evs); j += 1000 {
				if _, err := dbs[i].Append(context.Background(), task, uint64(j), evs[j:j+1000]...); err != nil {
					b.Fatal(err)
				}
			}
		}
		var took [3]time.Duration
		// Each file is read first in turn: a read pays for the garbage the one before it left.
		for k := 0; b.Loop(); k++ {
			for j := range dbs {
				i := (j + k) % len(dbs)
				db := dbs[i]
				start := time.Now()
				n := 0
				for _, err := range db.Events(context.Background(), task, 1) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				took[i] += time.Since(start)
				if n != len(evs) {
					b.Fatalf("read %d events, want %d", n, len(evs))
				}
			}
		}
		b.ReportMetric(float64(b.N*len(evs))/took[0].Seconds(), "compressed-events/s")
		b.ReportMetric(float64(b.N*len(evs))/took[1].Seconds(), "uncompressed-events/s")
		b.ReportMetric(float64(b.N*len(evs))/took[2].Seconds(), "format3-events/s")
	})
}

// BenchmarkAppendAfterDecision times the append of one tool call to a task whose last record is
// one of the mix's decisions (47 KB on average), without fsync, to a file in today's form and
// to one whose records are compressed whole (format 3's), in turn, and reports the median of
// each. The append reads the task's head from that last record: in today's form the hash in
// front of it, in format 3's form the decision decompressed.
func BenchmarkAppendAfterDecision(b *testing.B) {
	evs, _ := mix.Realistic(b, 2_000)
	var decisions, calls []events.Event
	for _, ev := range evs {
		switch ev.Type {
		case events.TypeDecision:
			decisions = append(decisions, ev)
		case events.TypeToolCall:
			calls = append(calls, ev)
		}
	}
	linked := openAt(b, filepath.Join(b.TempDir(), "linked.db"), &Options{NoSync: true})
	whole := openAt(b, filepath.Join(b.TempDir(), "whole.db"), &Options{NoSync: true})
	whole.wholeRecords = true
	task := uuid.New()
	var head uint64
	tl, tw := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	one := func(db *DB, i int, into *[]time.Duration) {
		// A decision, then the timed tool call; ids are unique per task, so each round has a
		// task of its own.
		if _, err := db.Append(context.Background(), task, head, decisions[i%len(decisions)]); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		_, err := db.Append(context.Background(), task, head+1, calls[i%len(calls)])
		*into = append(*into, time.Since(start))
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		task, head = uuid.New(), 0
		if i%2 == 0 {
			one(linked, i, &tl)
			one(whole, i, &tw)
		} else {
			one(whole, i, &tw)
			one(linked, i, &tl)
		}
	}
	ml, mw := median(tl), median(tw)
	b.ReportMetric(float64(ml.Nanoseconds()), "format4-ns/append")
	b.ReportMetric(float64(mw.Nanoseconds()), "format3-ns/append")
	b.ReportMetric(float64(ml)/float64(mw), "ratio")
}

// BenchmarkAppendBatch appends the realistic mix in batches, as an import writes, to a task of
// 100,000 events and reports the time and the bytes allocated per event of the last half of the
// batches. ids=time-ordered gives the events ids that grow with time, as a runtime's clock
// makes them; ids=hook gives them ids hashed from keys, as a hook's events have (see
// session.HookEventID), which land all over the task's id index: a batch of them rewrites a
// leaf of the index per event or so, where time-ordered ids rewrite the last one.
func BenchmarkAppendBatch(b *testing.B) {
	const n = 100_000
	for _, ids := range []string{"time-ordered", "hook"} {
		for _, batch := range []int{1_000, 10_000} {
			b.Run(fmt.Sprintf("ids=%s/batch=%d", ids, batch), func(b *testing.B) {
				evs, _ := mix.Realistic(b, n)
				for i := range evs {
					if ids == "hook" {
						sum := sha256.Sum256(fmt.Appendf(nil, "hook key %d", i))
						copy(evs[i].ID[:], sum[:16])
						continue
					}
					id, err := testIDs.New(evs[i].Time)
					if err != nil {
						b.Fatal(err)
					}
					evs[i].ID = id
				}
				var took time.Duration
				var allocated uint64
				for b.Loop() { // ns/op is the whole task; the metrics are of the last half
					db := openAt(b, filepath.Join(b.TempDir(), "batch.db"), &Options{NoSync: true})
					task := uuid.New()
					var head uint64
					var m0, m1 runtime.MemStats
					for first := 0; first < n; first += batch {
						if first == n/2 {
							runtime.ReadMemStats(&m0)
						}
						start := time.Now()
						a, err := db.Append(context.Background(), task, head, slices.Clone(evs[first:first+batch])...)
						if err != nil {
							b.Fatal(err)
						}
						if first >= n/2 {
							took += time.Since(start)
						}
						head = a.Last
					}
					runtime.ReadMemStats(&m1)
					allocated += m1.TotalAlloc - m0.TotalAlloc
					if err := db.Close(); err != nil {
						b.Fatal(err)
					}
				}
				events := float64(b.N) * n / 2
				b.ReportMetric(float64(took.Nanoseconds())/1000/events, "µs/event")
				b.ReportMetric(float64(allocated)/events, "B/event")
			})
		}
	}
}
