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
				return openStore(t, filepath.Join(t.TempDir(), "tasks.db"), &tt.opts)
			})
		})
	}
}

// What a closed bbolt store leaves in its file, opened again.
func TestConformanceReopen(t *testing.T) {
	open := func(t *testing.T) store.Store { return openStore(t, filepath.Join(t.TempDir(), "tasks.db"), nil) }
	reopen := func(t *testing.T, closed store.Store) store.Store { return openStore(t, closed.Path(), nil) }
	storetest.RunReopen(t, open, reopen)
}

func openStore(t *testing.T, path string, opts *store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
