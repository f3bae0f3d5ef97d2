package store

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
)

// A task's id index stays compact however its ids are made. A session's ids grow with time and
// are appended at the index's end, where pages are packed full. A hook's ids are hashes of the
// hook's keys, spread over the whole key space: packed full, every id put into a full page
// split off a page of one or two ids, and 13% of the index's pages were in use.
func TestIDIndexPagesStayFull(t *testing.T) {
	hashed := func(i int) ulid.ULID {
		sum := sha256.Sum256(fmt.Appendf(nil, "toolu_%08d", i))
		return ulid.ULID(sum[:16])
	}
	for _, tc := range []struct {
		name    string
		id      func(t *testing.T, i int) ulid.ULID
		atLeast float64
	}{
		{"a session's ids, which grow with time", func(t *testing.T, i int) ulid.ULID { return msg(t, 1, "").ID }, 0.9},
		{"a hook's ids, hashed", func(t *testing.T, i int) ulid.ULID { return hashed(i) }, 0.5},
		{"both in one task", func(t *testing.T, i int) ulid.ULID {
			if i%3 == 0 {
				return msg(t, 1, "").ID
			}
			return hashed(i)
		}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t)
			task := uuid.New()
			const events, perCommit = 6000, 2 // a hook's commit holds an event or two
			for i := 0; i < events; i += perCommit {
				batch := msgs(t, perCommit, "read")
				for j := range batch {
					batch[j].ID = tc.id(t, i+j)
				}
				mustAppend(t, db, task, uint64(i), batch...)
			}
			var s bolt.BucketStats
			err := db.view(func(tx *bolt.Tx) error { s = tx.Bucket(indexName(task)).Stats(); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if s.KeyN != events {
				t.Fatalf("the index holds %d ids, want %d", s.KeyN, events)
			}
			inUse := float64(s.LeafInuse) / float64(s.LeafAlloc)
			t.Logf("%d leaf pages, %.0f%% in use", s.LeafPageN, 100*inUse)
			if inUse < tc.atLeast {
				t.Errorf("%.0f%% of the index's leaf pages are in use (%d pages for %d ids), want at least %.0f%%",
					100*inUse, s.LeafPageN, s.KeyN, 100*tc.atLeast)
			}
			// Every id is found at its event's place.
			err = db.view(func(tx *bolt.Tx) error {
				for i, ev := range collect(t, db, task, 1) {
					if seq, ok, err := lookupID(tx.Bucket(indexName(task)), ev.ID); err != nil || !ok || seq != uint64(i+1) {
						return fmt.Errorf("the id of seq %d: found %v at seq %d (%v)", i+1, ok, seq, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
