package store_test

import (
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/storetest"
)

// The conformance suite against the bbolt store, as tests use it (no fsync) and as it is
// used for real (durable).
func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts store.Options
	}{
		{"nosync", store.Options{NoSync: true}},
		{"durable", store.Options{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				db, err := store.Open(filepath.Join(t.TempDir(), "tasks.db"), &tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			})
		})
	}
}
