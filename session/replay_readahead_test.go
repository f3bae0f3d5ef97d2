package session

import (
	"errors"
	"iter"
	"testing"

	"github.com/tasklog/tasklog/events"
)

// countingLog yields events 1..n, each with size bytes of data, then err if it is not nil,
// counting what it produced.
func countingLog(n, size int, err error, produced *int) iter.Seq2[events.Event, error] {
	data := make([]byte, size)
	return func(yield func(events.Event, error) bool) {
		for i := 1; i <= n; i++ {
			*produced = i
			if !yield(events.Event{Seq: uint64(i), Data: data}, nil) {
				return
			}
		}
		if err != nil {
			yield(events.Event{}, err)
		}
	}
}

func TestReadAhead(t *testing.T) {
	broken := errors.New("broken log")
	tests := []struct {
		name string
		n    int
		err  error
		stop int // leave the loop after this many events (0: read all)
		size int // bytes of data an event
	}{
		{"empty", 0, nil, 0, 0},
		{"less than a batch", 5, nil, 0, 0},
		{"whole batches", 4 * readAheadBatch, nil, 0, 0},
		{"many batches and a tail", 10*readAheadBatch + 7, nil, 0, 0},
		{"error after events", 3*readAheadBatch + 1, broken, 0, 0},
		{"error first", 0, broken, 0, 0},
		{"left early", 20 * readAheadBatch, nil, readAheadBatch + 3, 0},
		// A batch of large events ends at readAheadBytes: 4 events here.
		{"large events, left early", 200, nil, 10, readAheadBytes / 4},
		{"large events and an error", 9, broken, 0, readAheadBytes / 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var produced int
			var seqs []uint64
			var gotErr error
			for ev, err := range readAhead(countingLog(tt.n, tt.size, tt.err, &produced), eventBytes) {
				if err != nil {
					gotErr = err
					break
				}
				seqs = append(seqs, ev.Seq)
				if len(seqs) == tt.stop {
					break
				}
			}
			want := tt.n
			if tt.stop > 0 {
				want = tt.stop
			}
			if len(seqs) != want {
				t.Fatalf("%d events, want %d", len(seqs), want)
			}
			for i, s := range seqs {
				if s != uint64(i+1) {
					t.Fatalf("event %d has seq %d: out of order", i, s)
				}
			}
			if !errors.Is(gotErr, tt.err) {
				t.Errorf("error %v, want %v", gotErr, tt.err)
			}
			// The reader has stopped once the loop is over (the race detector would see it
			// write produced otherwise), no more than a few batches ahead; a batch holds
			// readAheadBatch events or readAheadBytes, whichever comes first.
			each := eventBytes(events.Event{Data: make([]byte, tt.size)})
			batch := min(readAheadBatch, (readAheadBytes+each-1)/each)
			if tt.stop > 0 && produced > tt.stop+(readAheadDepth+2)*batch {
				t.Errorf("the reader went on to event %d after the loop stopped at %d", produced, tt.stop)
			}
		})
	}
}
