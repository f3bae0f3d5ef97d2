package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/store"
)

// sum is the hex SHA-256 sum of data, computed here.
func sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// testBlobs stores content by its sum and reads it back.
func testBlobs(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	readme := []byte("# tasklog\n\nEvery decision, replayable.\n")
	large := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	huge := bytes.Repeat([]byte("fedcba9876543210"), 3<<16)  // 3 MiB: a large file's content
	t.Run("a blob is stored under its sum and read back", func(t *testing.T) {
		for _, data := range [][]byte{readme, large, huge, {}} {
			got, err := s.PutBlob(data)
			if err != nil || got != sum(data) {
				t.Fatalf("PutBlob(%d bytes) = %q, %v; want %s", len(data), got, err, sum(data))
			}
			checkBlob(t, s, data)
		}
	})
	t.Run("putting a blob again changes nothing", func(t *testing.T) {
		if got, err := s.PutBlob(bytes.Clone(readme)); err != nil || got != sum(readme) {
			t.Fatalf("PutBlob again = %q, %v", got, err)
		}
		checkBlob(t, s, readme)
	})
	t.Run("several blobs return their sums in order", func(t *testing.T) {
		blobs := [][]byte{[]byte("b"), []byte("a"), readme, []byte("b"), nil, []byte("c"),
			bytes.Repeat([]byte("x"), 2<<20), bytes.Repeat([]byte("y"), 2<<20)}
		got, err := s.PutBlobs(blobs)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(blobs) {
			t.Fatalf("PutBlobs returned %d sums for %d blobs", len(got), len(blobs))
		}
		for i, data := range blobs {
			if got[i] != sum(data) {
				t.Errorf("sum %d = %s, want %s", i, got[i], sum(data))
			}
			checkBlob(t, s, data)
		}
	})
	t.Run("no blobs at all", func(t *testing.T) {
		if got, err := s.PutBlobs(nil); err != nil || len(got) != 0 {
			t.Errorf("PutBlobs(nil) = %v, %v; want no sums", got, err)
		}
	})
	t.Run("the content read is the caller's to change", func(t *testing.T) {
		got, err := s.Blob(sum(readme))
		if err != nil {
			t.Fatal(err)
		}
		clear(got)
		checkBlob(t, s, readme)
	})
	t.Run("the content put is copied", func(t *testing.T) {
		data := []byte("changed after it was put")
		if _, err := s.PutBlob(data); err != nil {
			t.Fatal(err)
		}
		want := bytes.Clone(data)
		clear(data)
		checkBlob(t, s, want)
	})
	missing := sum([]byte("never stored"))
	tests := []struct {
		name string
		sum  string
	}{
		{"a sum never stored", missing},
		{"not hex", strings.Repeat("zz", sha256.Size)},
		{"too short", missing[:40]},
		{"too long", missing + "00"},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run("a blob not found: "+tt.name, func(t *testing.T) {
			if data, err := s.Blob(tt.sum); !errors.Is(err, store.ErrBlobNotFound) {
				t.Errorf("Blob = %q, %v; want ErrBlobNotFound", data, err)
			}
			if ok, err := s.HasBlob(tt.sum); ok || err != nil && !errors.Is(err, store.ErrBlobNotFound) {
				t.Errorf("HasBlob = %v, %v; want false", ok, err)
			}
		})
	}
}

// checkBlob fails t unless the store holds data under its sum.
func checkBlob(t *testing.T, s store.Store, data []byte) {
	t.Helper()
	got, err := s.Blob(sum(data))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Blob(%s) = %d bytes, %v; want the %d bytes put", sum(data)[:12], len(got), err, len(data))
	}
	if ok, err := s.HasBlob(sum(data)); !ok || err != nil {
		t.Fatalf("HasBlob(%s) = %v, %v; want true", sum(data)[:12], ok, err)
	}
}

// testSnapshots stores projection snapshots by task and name.
func testSnapshots(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	task, other := uuid.New(), uuid.New()
	steps := []struct {
		name string
		task uuid.UUID
		snap string
		seq  uint64
		data []byte
	}{
		{"a first snapshot", task, "rules", 10, []byte(`{"rules":["a"]}`)},
		{"another name of the same task", task, "files", 12, []byte(`{"files":3}`)},
		{"the same name of another task", other, "rules", 4, []byte(`{"rules":[]}`)},
		{"a newer snapshot replaces the first", task, "rules", 20, []byte(`{"rules":["a","b"]}`)},
		{"an older one replaces it too", task, "rules", 15, []byte(`{"rules":["c"]}`)},
		{"empty state", other, "files", 0, nil},
		{"a name with odd characters", task, "rules/v2 é.*>", 7, []byte("x")},
		{"a snapshot at the largest seq", other, "far", math.MaxUint64, []byte("far")},
	}
	type key struct {
		task uuid.UUID
		name string
	}
	type snapshot struct {
		seq  uint64
		data []byte
	}
	want := map[key]snapshot{}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			data := bytes.Clone(step.data)
			if err := s.PutSnapshot(step.task, step.snap, step.seq, data); err != nil {
				t.Fatal(err)
			}
			clear(data)
			want[key{step.task, step.snap}] = snapshot{step.seq, step.data}
			for _, k := range []key{{task, "rules"}, {task, "files"}, {other, "rules"}, {other, "files"}, {task, "rules/v2 é.*>"}, {other, "far"}} {
				seq, got, err := s.Snapshot(k.task, k.name)
				w, ok := want[k]
				switch {
				case !ok && !errors.Is(err, store.ErrNoSnapshot):
					t.Errorf("Snapshot(%s, %q) = %d, %q, %v; want ErrNoSnapshot", k.task, k.name, seq, got, err)
				case ok && (err != nil || seq != w.seq || !bytes.Equal(got, w.data)):
					t.Errorf("Snapshot(%s, %q) = %d, %q, %v; want %d, %q", k.task, k.name, seq, got, err, w.seq, w.data)
				}
			}
		})
	}
	t.Run("the state read is the caller's to change", func(t *testing.T) {
		_, got, err := s.Snapshot(task, "rules")
		if err != nil {
			t.Fatal(err)
		}
		clear(got)
		if _, again, _ := s.Snapshot(task, "rules"); string(again) != `{"rules":["c"]}` {
			t.Errorf("after the caller changed its copy the snapshot is %q", again)
		}
	})
	t.Run("an unknown task has no snapshot", func(t *testing.T) {
		if _, _, err := s.Snapshot(uuid.New(), "rules"); !errors.Is(err, store.ErrNoSnapshot) {
			t.Errorf("Snapshot = %v, want ErrNoSnapshot", err)
		}
	})
	t.Run("an empty name is refused", func(t *testing.T) {
		if err := s.PutSnapshot(task, "", 3, []byte("x")); err == nil {
			t.Fatal("PutSnapshot with an empty name succeeded")
		}
		if _, _, err := s.Snapshot(task, ""); !errors.Is(err, store.ErrNoSnapshot) {
			t.Errorf("Snapshot(\"\") = %v, want ErrNoSnapshot", err)
		}
	})
}
