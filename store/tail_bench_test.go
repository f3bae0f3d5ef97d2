package store

import (
	"encoding/binary"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkBoltCommitTail is the floor under a decision's latency tail: bbolt alone, without
// tasklog, committing what an append of one event commits at the least (a 600-byte record
// under its sequence number, and its id in the index) in one transaction without fsync. It
// reports the median and the 99th percentile of a commit, their ratio and the bytes a commit
// allocates. bbolt materialises the pages a transaction writes as Go memory at every commit,
// so the garbage collector runs every 80 commits or so on a small heap, and its cycles
// make the tail: run it with GOGC=100 (the default) and GOGC=400 to see how much.
func BenchmarkBoltCommitTail(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "bolt.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	record := make([]byte, 600)
	for i := range record {
		record[i] = byte('a' + i%26)
	}
	var took []time.Duration
	var before, after runtime.MemStats
	seq := uint64(0)
	commit := func() {
		seq++
		err := db.Update(func(tx *bolt.Tx) error {
			log, err := tx.CreateBucketIfNotExists([]byte("log"))
			if err != nil {
				return err
			}
			ids, err := tx.CreateBucketIfNotExists([]byte("ids"))
			if err != nil {
				return err
			}
			log.FillPercent, ids.FillPercent = 1, 1
			key := binary.BigEndian.AppendUint64(nil, seq)
			// Ids grow with time, as an event's ULID does.
			id := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, seq), seq*2654435761)
			if err := log.Put(key, record); err != nil {
				return err
			}
			return ids.Put(id, key)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for range 5_000 { // a log of some size, whose pages a commit reads
		commit()
	}
	runtime.ReadMemStats(&before)
	for b.Loop() {
		start := time.Now()
		commit()
		took = append(took, time.Since(start))
	}
	runtime.ReadMemStats(&after)
	slices.Sort(took)
	at := func(q float64) time.Duration { return took[int(q*float64(len(took)-1))] }
	b.ReportMetric(float64(at(0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(at(0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(at(0.99))/float64(at(0.5)), "p99/p50")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N), "alloc-B/commit")
	b.ReportMetric(float64(after.NumGC-before.NumGC)*1000/float64(b.N), "GCs/1000-commits")
}
