package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// compactTxBytes is the most keys' and values' bytes one transaction of CompactTo writes.
const compactTxBytes = 8 << 20

// CompactTo copies the database into a new file at path (an empty file is taken as new): the
// same buckets, keys and values, so the same records, chains, id indexes, blobs and
// snapshots, written in key order with every page packed full. Pages a file left part empty
// (the id indexes of hooks' events written before their pages were split at half, and pages
// freed by nothing) take no room in the copy. The copy is read in one read transaction, so
// it is the database as it was when CompactTo began; appends that commit meanwhile are in the
// source only. The copy is written with fsync. On an error the file at path holds part of the
// copy at most, and the caller removes it.
func (db *DB) CompactTo(path string) error {
	dst, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockPoll})
	if err != nil {
		return fmt.Errorf("compact %q into %q: %w", db.path, path, err)
	}
	dst.AllocSize = allocSize // the file grows as a store's does, not by bbolt's 16 MiB
	err = bolt.Compact(dst, db.bolt, compactTxBytes)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, bolt.ErrBucketExists) {
			err = fmt.Errorf("%w: %q is not empty", err, path)
		}
		return fmt.Errorf("compact %q into %q: %w", db.path, path, err)
	}
	return nil
}
