package natsstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

func natsMsg(subject string, data []byte) *nats.Msg { return &nats.Msg{Subject: subject, Data: data} }

// PutBlob stores data under its SHA-256 sum, in the object store STREAM_blobs, and returns the
// sum in hex. Content is written once: putting it again writes nothing.
func (s *Store) PutBlob(data []byte) (string, error) {
	sums, err := s.PutBlobs([][]byte{data})
	if err != nil {
		return "", err
	}
	return sums[0], nil
}

// PutBlobs stores every blob and returns their hex sums in order. Each blob is stored whole or
// not at all; a failure part-way leaves the blobs before it stored, which is harmless, as
// content is addressed by its sum.
func (s *Store) PutBlobs(blobs [][]byte) ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	sums := make([]string, len(blobs))
	for i, b := range blobs {
		sum := sha256.Sum256(b)
		sums[i] = hex.EncodeToString(sum[:])
	}
	for i, b := range blobs {
		ok, err := s.HasBlob(sums[i])
		if err != nil {
			return nil, err
		}
		if ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		if !s.noCompress {
			b = payloadcodec.Encode(nil, b)
		}
		_, err = s.putObject(ctx, s.blobs, sums[i], b)
		cancel()
		if err != nil {
			return nil, s.errorf(fmt.Sprintf("put blob %s", sums[i]), err)
		}
	}
	return sums, nil
}

// Blob returns the content whose hex SHA-256 sum is sum, or store.ErrBlobNotFound. Content
// that no longer matches its sum is reported as store.ErrCorrupt.
func (s *Store) Blob(sum string) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	key, err := store.ParseBlobSum(sum)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	data, err := s.blobs.GetBytes(ctx, sum)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return nil, fmt.Errorf("blob %s: %w", sum, store.ErrBlobNotFound)
	case errors.Is(err, jetstream.ErrDigestMismatch):
		return nil, fmt.Errorf("blob %s: %w: %w", sum, store.ErrCorrupt, err)
	case err != nil:
		return nil, s.errorf(fmt.Sprintf("blob %s", sum), err)
	}
	return store.BlobContent(sum, key, data)
}

// HasBlob reports whether content with the hex SHA-256 sum is stored.
func (s *Store) HasBlob(sum string) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	if _, err := store.ParseBlobSum(sum); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	_, err := s.blobs.GetInfo(ctx, sum)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return false, nil
	case err != nil:
		return false, s.errorf(fmt.Sprintf("blob %s", sum), err)
	}
	return true, nil
}

// snapshotName is the object name of a snapshot.
func snapshotName(task uuid.UUID, name string) string { return task.String() + "/" + name }

// PutSnapshot stores a projection's state as of seq under name, in the object store
// STREAM_snapshots, replacing any earlier snapshot of that name.
func (s *Store) PutSnapshot(task uuid.UUID, name string, seq uint64, data []byte) error {
	if err := s.check(); err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("put snapshot of task %s: the name is empty", task)
	}
	val := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(data)), seq)
	val = append(val, data...)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if _, err := s.putObject(ctx, s.snaps, snapshotName(task, name), val); err != nil {
		return s.errorf(fmt.Sprintf("put snapshot %q of task %s", name, task), err)
	}
	return nil
}

// Snapshot returns the sequence number and state of the named snapshot, or store.ErrNoSnapshot.
func (s *Store) Snapshot(task uuid.UUID, name string) (uint64, []byte, error) {
	if err := s.check(); err != nil {
		return 0, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	v, err := s.snaps.GetBytes(ctx, snapshotName(task, name))
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound) || name == "":
		return 0, nil, fmt.Errorf("snapshot %q of task %s: %w", name, task, store.ErrNoSnapshot)
	case err != nil:
		return 0, nil, s.errorf(fmt.Sprintf("snapshot %q of task %s", name, task), err)
	case len(v) < 8:
		return 0, nil, fmt.Errorf("snapshot %q of task %s: %w: %d bytes", name, task, store.ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), v[8:], nil // GetBytes gives a buffer of its own
}

// putObject stores data as the named object in chunks as large as a message allows, so a large
// object costs few writes.
func (s *Store) putObject(ctx context.Context, os jetstream.ObjectStore, name string, data []byte) (*jetstream.ObjectInfo, error) {
	chunk := max(s.spillLimit(), 128<<10)
	return os.Put(ctx, jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: uint32(chunk)}}, bytes.NewReader(data))
}
