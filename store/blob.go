package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/store/payloadcodec"
)

// PutBlob stores data under its SHA-256 sum and returns the sum in hex. Content is written once:
// putting it again writes nothing.
func (db *DB) PutBlob(data []byte) (string, error) {
	sums, err := db.PutBlobs([][]byte{data})
	if err != nil {
		return "", err
	}
	return sums[0], nil
}

// PutBlobs stores every blob in one transaction and returns their hex sums in order.
func (db *DB) PutBlobs(blobs [][]byte) ([]string, error) {
	sums := make([][sha256.Size]byte, len(blobs))
	hexSums := make([]string, len(blobs))
	for i, b := range blobs {
		sums[i] = sha256.Sum256(b)
		hexSums[i] = hex.EncodeToString(sums[i][:])
	}
	// A read transaction first: re-putting known content then costs no write and no fsync.
	missing := make([]int, 0, len(blobs))
	err := db.view(func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBlobs)
		for i := range blobs {
			if bb == nil || bb.Get(sums[i][:]) == nil {
				missing = append(missing, i)
			}
		}
		return nil
	})
	if err != nil || len(missing) == 0 {
		return hexSums, err
	}
	// Compressed before the write transaction, which the appends of every task wait on.
	stored := make([][]byte, len(blobs))
	for _, i := range missing {
		stored[i] = blobs[i]
		if !db.noCompress {
			stored[i] = payloadcodec.Encode(nil, blobs[i])
		}
	}
	err = db.update(func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBlobs)
		for _, i := range missing {
			if bb.Get(sums[i][:]) != nil {
				continue
			}
			if err := bb.Put(sums[i][:], stored[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("put blobs: %w", err)
	}
	return hexSums, nil
}

// Blob returns a copy of the content whose hex SHA-256 sum is sum, or ErrBlobNotFound. Content
// that no longer matches its sum is reported as ErrCorrupt.
func (db *DB) Blob(sum string) ([]byte, error) {
	key, err := ParseBlobSum(sum)
	if err != nil {
		return nil, err
	}
	var data []byte
	err = db.view(func(tx *bolt.Tx) error {
		if bb := tx.Bucket(bucketBlobs); bb != nil {
			if v := bb.Get(key); v != nil {
				data = bytes.Clone(v)
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case data == nil:
		return nil, fmt.Errorf("blob %s: %w", sum, ErrBlobNotFound)
	}
	return BlobContent(sum, key, data)
}

// BlobContent returns the content a stored blob holds, given the sum it is stored under (hex,
// and its 32 bytes): the stored bytes themselves when they are the content (blobs written
// before compression, and those it would not shrink, whatever their first byte), else what they
// decompress to. Content that does not match its sum is ErrCorrupt. Every Store reads a blob
// through it.
func BlobContent(sum string, key, stored []byte) ([]byte, error) {
	var decodeErr error
	if payloadcodec.IsCompressed(stored) {
		var data []byte
		if data, decodeErr = payloadcodec.Decode(nil, stored); decodeErr == nil && sha256.Sum256(data) == [sha256.Size]byte(key) {
			return data, nil
		}
	}
	// Stored as it is: written before compression, not shrunk by it, or (starting with the tag
	// by chance) content that does not decode.
	if sha256.Sum256(stored) == [sha256.Size]byte(key) {
		return stored, nil
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("blob %s: %w: %w", sum, ErrCorrupt, decodeErr)
	}
	return nil, fmt.Errorf("blob %s: %w: the stored content has another sum", sum, ErrCorrupt)
}

// HasBlob reports whether content with the hex SHA-256 sum is stored.
func (db *DB) HasBlob(sum string) (bool, error) {
	key, err := ParseBlobSum(sum)
	if err != nil {
		return false, err
	}
	var ok bool
	err = db.view(func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBlobs)
		ok = bb != nil && bb.Get(key) != nil
		return nil
	})
	return ok, err
}

// ParseBlobSum decodes a blob's hex SHA-256 sum into the 32 bytes it names; anything else is
// ErrBlobNotFound, as no blob has that sum. Every Store reads a sum through it.
func ParseBlobSum(sum string) ([]byte, error) {
	key, err := hex.DecodeString(sum)
	if err != nil || len(key) != sha256.Size {
		return nil, fmt.Errorf("blob %q: %w: not a hex SHA-256 sum", sum, ErrBlobNotFound)
	}
	return key, nil
}

// PutSnapshot stores a projection's state as of seq under name, replacing any earlier snapshot
// of that name: snapshots are derived and can always be rebuilt from the log.
func (db *DB) PutSnapshot(task uuid.UUID, name string, seq uint64, data []byte) error {
	if name == "" {
		return fmt.Errorf("put snapshot of task %s: the name is empty", task)
	}
	err := db.update(func(tx *bolt.Tx) error {
		// bbolt keeps a reference to the value until the commit, and one write transaction
		// runs at a time: the DB's buffer is this one's until it ends.
		val := binary.BigEndian.AppendUint64(db.snapshotVal[:0], seq)
		val = append(val, data...)
		if db.snapshotVal = nil; cap(val) <= maxKeptArena {
			db.snapshotVal = val[:0]
		}
		return tx.Bucket(bucketSnapshots).Put(snapshotKey(task, name), val)
	})
	if err != nil {
		return fmt.Errorf("put snapshot %q of task %s: %w", name, task, err)
	}
	return nil
}

// Snapshot returns the sequence number and a copy of the state of the named snapshot, or
// ErrNoSnapshot.
func (db *DB) Snapshot(task uuid.UUID, name string) (seq uint64, data []byte, err error) {
	found := false
	err = db.view(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bucketSnapshots)
		if sb == nil {
			return nil
		}
		v := sb.Get(snapshotKey(task, name))
		if v == nil {
			return nil
		}
		if len(v) < 8 {
			return fmt.Errorf("snapshot %q of task %s: %w: %d bytes", name, task, ErrCorrupt, len(v))
		}
		found = true
		seq, data = bytesToUint64(v), bytes.Clone(v[8:])
		return nil
	})
	if err == nil && !found {
		err = fmt.Errorf("snapshot %q of task %s: %w", name, task, ErrNoSnapshot)
	}
	return seq, data, err
}

func snapshotKey(task uuid.UUID, name string) []byte {
	return append(append(make([]byte, 0, 16+len(name)), task[:]...), name...)
}
