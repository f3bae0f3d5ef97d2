package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// sealedChain returns n events of task sealed into a chain, as Append stores them.
func sealedChain(t *testing.T, task uuid.UUID, n int) []events.Event {
	t.Helper()
	evs := msgs(t, n, "chain")
	var prev events.Hash
	for i := range evs {
		evs[i].Task, evs[i].Seq = task, uint64(i+1)
		evs[i].Seal(prev)
		prev = evs[i].Hash
	}
	return evs
}

func TestChainVerifier(t *testing.T) {
	task := uuid.New()
	tests := []struct {
		name    string
		alter   func(evs []events.Event) []events.Event
		seq     uint64
		problem string
	}{
		{"sound chain", func(evs []events.Event) []events.Event { return evs }, 0, ""},
		{"event left out", func(evs []events.Event) []events.Event {
			return append(evs[:3:3], evs[4:]...)
		}, 4, "says it is seq 5"},
		{"pair swapped", func(evs []events.Event) []events.Event {
			evs[5], evs[6] = evs[6], evs[5]
			return evs
		}, 6, "says it is seq 7"},
		{"event of another task", func(evs []events.Event) []events.Event {
			evs[2].Task = uuid.New()
			evs[2].Seal(evs[2].Prev)
			return evs
		}, 3, "belongs to task"},
		{"data altered", func(evs []events.Event) []events.Event {
			evs[7].Data = []byte(`{"text":"forged"}`)
			return evs
		}, 8, "hash mismatch: stored "},
		{"event altered and resealed", func(evs []events.Event) []events.Event {
			evs[7].Data = []byte(`{"text":"forged"}`)
			evs[7].Seal(evs[7].Prev)
			return evs
		}, 9, "prev link"},
		{"first event with a prev", func(evs []events.Event) []events.Event {
			evs[0].Seal(evs[1].Hash)
			return evs
		}, 1, "prev link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := tt.alter(sealedChain(t, task, 10))
			c := NewChainVerifier(task)
			if c.Next() != 1 {
				t.Fatalf("a new verifier expects seq %d, want 1", c.Next())
			}
			var err error
			for i := range evs {
				if err = c.Check(&evs[i]); err != nil {
					break
				}
			}
			if tt.problem == "" {
				if err != nil || c.Next() != 11 {
					t.Fatalf("Check = %v, Next = %d; want nil, 11", err, c.Next())
				}
				return
			}
			var ve *VerifyError
			want := tt.problem
			if !errors.Is(err, ErrChainBroken) || !errors.As(err, &ve) || ve.Task != task || ve.Seq != tt.seq ||
				!strings.Contains(ve.Problem, want) {
				t.Fatalf("Check = %v\nwant a VerifyError at seq %d: %s…", err, tt.seq, want)
			}
			if c.Next() != tt.seq {
				t.Errorf("after a refused event Next = %d, want it still %d", c.Next(), tt.seq)
			}
		})
	}
}

// Checking a chain allocates nothing once the encoding buffer has grown to the largest event.
func TestChainVerifierReusesItsBuffer(t *testing.T) {
	task := uuid.New()
	evs := sealedChain(t, task, 200)
	c := NewChainVerifier(task)
	if err := c.Check(&evs[0]); err != nil {
		t.Fatal(err)
	}
	i := 1
	allocs := testing.AllocsPerRun(100, func() {
		if err := c.Check(&evs[i]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs > 0 {
		t.Errorf("Check allocates %.1f times per event, want 0", allocs)
	}
}
