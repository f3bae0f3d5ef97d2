package events

import (
	"crypto/rand"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// IDSource makes event ids: ULIDs that are monotonic within the source, so ids made by one
// process sort in the order they were made, even within one millisecond. Safe for concurrent use.
type IDSource struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
}

// NewIDSource returns a source drawing entropy from r; nil means crypto/rand. Tests pass a
// seeded reader to get repeatable ids.
func NewIDSource(r io.Reader) *IDSource {
	if r == nil {
		r = rand.Reader
	}
	return &IDSource{entropy: ulid.Monotonic(r, 0)}
}

// New returns an id for an event recorded at t.
func (s *IDSource) New(t time.Time) (ulid.ULID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := ulid.New(ulid.Timestamp(t), s.entropy)
	if err != nil {
		return ulid.ULID{}, fmt.Errorf("make event id: %w", err)
	}
	return id, nil
}
