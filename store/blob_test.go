package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/uuid"
)

func TestBlobs(t *testing.T) {
	db := openTest(t)
	data := []byte("---\npaths: [\"src/**\"]\n---\nUse tabs.\n")
	sum, err := db.PutBlob(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256(data); sum != hex.EncodeToString(want[:]) {
		t.Errorf("sum %s is not the SHA-256 of the content", sum)
	}
	again, err := db.PutBlob(bytes.Clone(data))
	if err != nil || again != sum {
		t.Errorf("second PutBlob = %s, %v", again, err)
	}
	got, err := db.Blob(sum)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Blob = %q, %v", got, err)
	}
	got[0] = 'X' // the caller's copy, not the store's
	if got, _ := db.Blob(sum); !bytes.Equal(got, data) {
		t.Error("changing a returned blob changed the stored one")
	}

	sums, err := db.PutBlobs([][]byte{[]byte("a"), data, {}, []byte("a")})
	if err != nil || len(sums) != 4 || sums[1] != sum || sums[0] != sums[3] {
		t.Fatalf("PutBlobs = %v, %v", sums, err)
	}
	if empty, err := db.Blob(sums[2]); err != nil || len(empty) != 0 {
		t.Errorf("empty blob = %q, %v", empty, err)
	}
	for _, s := range sums {
		if ok, err := db.HasBlob(s); !ok || err != nil {
			t.Errorf("HasBlob(%s) = %v, %v", s, ok, err)
		}
	}
	unknown := sha256.Sum256([]byte("never stored"))
	if ok, _ := db.HasBlob(hex.EncodeToString(unknown[:])); ok {
		t.Error("HasBlob of unknown content")
	}
	for _, bad := range []string{hex.EncodeToString(unknown[:]), "", "zz", sum[:10]} {
		if _, err := db.Blob(bad); !errors.Is(err, ErrBlobNotFound) {
			t.Errorf("Blob(%q) = %v, want ErrBlobNotFound", bad, err)
		}
	}
}

func TestSnapshotsOverwrite(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	if _, _, err := db.Snapshot(task, "context"); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("Snapshot before any = %v, want ErrNoSnapshot", err)
	}
	if err := db.PutSnapshot(task, "context", 10, []byte("state at 10")); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSnapshot(task, "context", 25, []byte("state at 25")); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSnapshot(task, "timeline", 3, []byte("other")); err != nil {
		t.Fatal(err)
	}
	seq, data, err := db.Snapshot(task, "context")
	if err != nil || seq != 25 || string(data) != "state at 25" {
		t.Errorf("Snapshot = %d %q %v, want the second one", seq, data, err)
	}
	if seq, data, _ := db.Snapshot(task, "timeline"); seq != 3 || string(data) != "other" {
		t.Errorf("timeline = %d %q", seq, data)
	}
	if _, _, err := db.Snapshot(uuid.New(), "context"); !errors.Is(err, ErrNoSnapshot) {
		t.Errorf("another task's snapshot = %v, want ErrNoSnapshot", err)
	}
}
