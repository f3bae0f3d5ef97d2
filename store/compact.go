package store

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

// compactTxBytes is the most keys' and values' bytes one transaction of CompactTo writes.
const compactTxBytes = 8 << 20

// ErrNotEmpty is returned by CompactTo for a path that holds a file with something in it.
var ErrNotEmpty = errors.New("not an empty file")

// CompactTo copies the database into a new file at path (an empty file is taken as new; any
// other file is refused with ErrNotEmpty and left alone): the same buckets, keys and values,
// so the same records, chains, id indexes, blobs and snapshots, written in key order with
// every page packed full. Pages a file left part empty (the id indexes of hooks' events
// written before their pages were split at half, and pages freed by nothing) take no room in
// the copy. The copy is read in one read transaction, so it is the database as it was when
// CompactTo began; appends that commit meanwhile are in the source only. A damaged page of the
// source fails with ErrCorrupt, as a read does. On an error the file at path holds part of the
// copy at most, and the caller removes it.
func (db *DB) CompactTo(path string) (err error) {
	if info, err := os.Stat(path); err == nil && info.Size() > 0 {
		return fmt.Errorf("compact %q into %q: %w", db.path, path, ErrNotEmpty)
	}
	dst, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockPoll})
	if err != nil {
		return fmt.Errorf("compact %q into %q: %w", db.path, path, err)
	}
	dst.AllocSize = allocSize // the file grows as a store's does, not by bbolt's 16 MiB
	// A file written between the look above and the open is refused too.
	err = dst.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Cursor().First(); k != nil {
			return ErrNotEmpty
		}
		return nil
	})
	if err == nil {
		err = db.compactInto(dst)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("compact %q into %q: %w", db.path, path, err)
	}
	return nil
}

// compactInto runs bbolt's copy, turning a panic or fault on a damaged page of the source into
// ErrCorrupt, as viewTask does.
func (db *DB) compactInto(dst *bolt.DB) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = db.corruptError(uuid.Nil, r)
		}
	}()
	return boltError(bolt.Compact(dst, db.bolt, compactTxBytes))
}

// SameContents reports whether other holds the buckets db holds, each with as many keys and
// the same sequence, and the same head (sequence number and hash) for every task: what a copy
// made by CompactTo holds when nothing was appended to db meanwhile. The first difference is
// the error.
func (db *DB) SameContents(other *DB) error {
	if other == db {
		return nil
	}
	return db.view(func(tx *bolt.Tx) error {
		return other.view(func(otx *bolt.Tx) error {
			var names [][]byte
			err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
				names = append(names, name)
				return nil
			})
			if err != nil {
				return err
			}
			n := 0
			if err := otx.ForEach(func([]byte, *bolt.Bucket) error { n++; return nil }); err != nil {
				return err
			}
			if n != len(names) {
				return fmt.Errorf("%q holds %d buckets, %q %d", other.path, n, db.path, len(names))
			}
			for _, name := range names {
				if err := sameBucket(tx, otx, name); err != nil {
					return fmt.Errorf("bucket %x: %w", name, err)
				}
			}
			return nil
		})
	})
}

// sameBucket compares the top-level bucket name of two transactions: its keys' count and
// sequence, and for a task's log its head.
func sameBucket(tx, otx *bolt.Tx, name []byte) error {
	b, ob := tx.Bucket(name), otx.Bucket(name)
	if ob == nil {
		return errors.New("missing in the copy")
	}
	if n, cn := b.Stats().KeyN, ob.Stats().KeyN; n != cn {
		return fmt.Errorf("%d keys in the copy, %d in the source", cn, n)
	}
	if s, cs := b.Sequence(), ob.Sequence(); s != cs {
		return fmt.Errorf("sequence %d in the copy, %d in the source", cs, s)
	}
	if !isTaskBucket(name) {
		return nil
	}
	task := uuid.UUID(name)
	h, err := readHead(b, task)
	if err != nil {
		return err
	}
	oh, err := readHead(ob, task)
	if err != nil {
		return err
	}
	if h.seq != oh.seq || h.hash != oh.hash {
		return fmt.Errorf("the copy's head is seq %d (%s), the source's seq %d (%s)", oh.seq, oh.hash, h.seq, h.hash)
	}
	return nil
}

// PageUse is how much of a database file its data takes.
type PageUse struct {
	// File is the file's size in bytes.
	File int64
	// Pages is the bytes of the pages the file's buckets hold (a bucket small enough to live
	// inside its parent's page counts its bytes); the rest of the file is the root's pages,
	// free pages, the meta pages and room to grow.
	Pages int64
	// InUse is the bytes of those pages that hold keys, values and their headers.
	InUse int64
	// Overflow is the bytes of the pages beyond the first of leaves larger than a page: the
	// records and blobs of several kilobytes, whose pages a copy packs no fuller.
	Overflow int64
}

// PageUse measures how much of the file its data takes, walking every bucket's pages: a file
// whose InUse is far below File is one CompactTo makes smaller.
func (db *DB) PageUse() (PageUse, error) {
	var u PageUse
	info, err := os.Stat(db.path)
	if err != nil {
		return u, err
	}
	u.File = info.Size()
	err = db.view(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
			s := b.Stats()
			u.Pages += int64(s.BranchAlloc + s.LeafAlloc + s.InlineBucketInuse)
			u.InUse += int64(s.BranchInuse + s.LeafInuse + s.InlineBucketInuse)
			u.Overflow += int64(s.LeafOverflowN) * int64(db.bolt.Info().PageSize)
			return nil
		})
	})
	return u, err
}
