package natsstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

// An event whose encoding does not fit in one message (the server's max_payload, 1 MiB by
// default, less room for headers) is spilled: its encoding is put in the blob object store,
// under the name "event-" and its hex SHA-256 sum, before the message is published, and the
// message carries the sum in the Tasklog-Spilled header and no payload. The message is still
// the event's place in the log, its subject its id: only the bytes live elsewhere. A spilled
// object whose message was never stored (a refused append) is harmless, as it is content
// addressed, and is reused by a retry.
const spillHeader = "Tasklog-Spilled"

// headerRoom is what a message's headers may take beside its payload.
const headerRoom = 8 << 10

// spillLimit is the largest encoding kept in the message itself.
func (s *Store) spillLimit() int {
	if s.maxInline > 0 {
		return s.maxInline
	}
	return int(s.nc.MaxPayload()) - headerRoom
}

func spillName(sum string) string { return "event-" + sum }

// spill stores an event's encoding in the object store and returns its hex sum.
func (s *Store) spill(ctx context.Context, enc []byte) (string, error) {
	h := sha256.Sum256(enc)
	sum := hex.EncodeToString(h[:])
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.blobs.GetInfo(ctx, spillName(sum)); err == nil {
		return sum, nil
	}
	if _, err := s.putObject(ctx, s.blobs, spillName(sum), enc); err != nil {
		return "", fmt.Errorf("storing an event of %d bytes in object store %s_blobs: %w", len(enc), s.stream, err)
	}
	return sum, nil
}

// payload returns the canonical encoding of the event m holds: its data, or its spilled object,
// checked against the sum the message names, decompressed if it is kept compressed.
func (s *Store) payload(ctx context.Context, m storedMsg) ([]byte, error) {
	if m.Spilled == "" {
		return canonical(m.Seq, m.Data)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	enc, err := s.blobs.GetBytes(ctx, spillName(m.Spilled))
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return nil, fmt.Errorf("stream seq %d: %w: the event's bytes (object %s) are missing", m.Seq, store.ErrCorrupt, spillName(m.Spilled))
	case err != nil:
		return nil, fmt.Errorf("stream seq %d: reading the event's bytes from object %s: %w", m.Seq, spillName(m.Spilled), err)
	}
	if h := sha256.Sum256(enc); hex.EncodeToString(h[:]) != m.Spilled {
		return nil, fmt.Errorf("stream seq %d: %w: object %s does not hold the bytes its name sums", m.Seq, store.ErrCorrupt, spillName(m.Spilled))
	}
	return canonical(m.Seq, enc)
}

// canonical returns the canonical encoding of an event kept as stored (see package
// payloadcodec): stored itself, or what it decompresses to. A record that does not decompress
// is ErrCorrupt, named by its stream sequence.
func canonical(streamSeq uint64, stored []byte) ([]byte, error) {
	if !payloadcodec.IsCompressed(stored) {
		return stored, nil
	}
	b, err := payloadcodec.Decode(nil, stored)
	if err != nil {
		return nil, fmt.Errorf("stream seq %d: %w: the stored record: %w", streamSeq, store.ErrCorrupt, err)
	}
	return b, nil
}
