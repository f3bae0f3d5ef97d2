package projections

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tasklog/tasklog/events"
)

// DeliveriesVersion is the version of the Deliveries fold and of its snapshot encoding.
const DeliveriesVersion = 1

// MaxDelivered and MaxLoaded cap the Deliveries state: past them the oldest entry is forgotten
// (a rule then may be delivered once more; a file the agent loaded may be delivered once).
const (
	MaxDelivered = 4096
	MaxLoaded    = 1024
)

// Deliveries folds what reached the model through an agent's hooks: the rules delivered since
// the last compaction, the instruction files the agent loaded itself, and the compactions. It
// is pure, like Task, and folds every event type (the ones it does not need are skipped), so
// it can resume from a snapshot plus the events after it.
type Deliveries struct {
	lastSeq     uint64
	compactions int
	// delivered maps a rule id to the seq of the delivery that last sent it, since the last
	// compaction.
	delivered map[string]uint64
	// loaded are the absolute paths the agent reported loading itself, sorted.
	loaded []string
}

// NewDeliveries returns an empty fold.
func NewDeliveries() *Deliveries { return &Deliveries{delivered: map[string]uint64{}} }

// Apply folds one event. Events must come in log order; an event at or before the last folded
// one is an error (ErrOutOfOrder), an unreadable payload of the types it folds likewise.
func (d *Deliveries) Apply(ev events.Event) error {
	if ev.Seq <= d.lastSeq {
		return fmt.Errorf("projections: deliveries: event %s: %w: after seq %d", ev, ErrOutOfOrder, d.lastSeq)
	}
	switch ev.Type {
	case events.TypeDelivery, events.TypeInstructionsLoaded, events.TypeCompaction:
	default:
		d.lastSeq = ev.Seq
		return nil
	}
	p, err := ev.Payload()
	if err != nil {
		return fmt.Errorf("projections: deliveries: %w", err)
	}
	switch p := p.(type) {
	case *events.Delivery:
		for _, r := range p.Rules {
			if _, ok := d.delivered[r.ID]; !ok && len(d.delivered) >= MaxDelivered {
				d.forgetOldest()
			}
			d.delivered[r.ID] = ev.Seq
		}
	case *events.InstructionsLoaded:
		if i, found := slices.BinarySearch(d.loaded, p.Path); !found {
			if len(d.loaded) >= MaxLoaded {
				d.loaded = d.loaded[1:]
				i, _ = slices.BinarySearch(d.loaded, p.Path)
			}
			d.loaded = slices.Insert(d.loaded, i, p.Path)
		}
	case *events.Compaction:
		d.compactions++
		clear(d.delivered)
	}
	d.lastSeq = ev.Seq
	return nil
}

// forgetOldest drops the rule delivered longest ago (the smallest seq, then the smallest id).
func (d *Deliveries) forgetOldest() {
	var id string
	var seq uint64
	for k, s := range d.delivered {
		if id == "" || s < seq || (s == seq && k < id) {
			id, seq = k, s
		}
	}
	delete(d.delivered, id)
}

// LastSeq is the sequence number of the last event folded.
func (d *Deliveries) LastSeq() uint64 { return d.lastSeq }

// Compactions counts the compactions folded.
func (d *Deliveries) Compactions() int { return d.compactions }

// DeliveredAt is the sequence number of the delivery that sent the rule since the last
// compaction; ok is false when none did.
func (d *Deliveries) DeliveredAt(ruleID string) (seq uint64, ok bool) {
	seq, ok = d.delivered[ruleID]
	return seq, ok
}

// DeliverySeqs are the sequence numbers of the deliveries that last sent a rule since the last
// compaction, newest first.
func (d *Deliveries) DeliverySeqs() []uint64 {
	seqs := make([]uint64, 0, len(d.delivered))
	for _, s := range d.delivered {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	slices.Reverse(seqs)
	return seqs
}

// Loaded reports whether the agent reported loading the file at the absolute path itself.
func (d *Deliveries) Loaded(path string) bool {
	_, ok := slices.BinarySearch(d.loaded, path)
	return ok
}

// LoadedPaths are the files the agent reported loading itself, sorted.
func (d *Deliveries) LoadedPaths() []string { return slices.Clone(d.loaded) }

type deliveriesSnapshot struct {
	Version     int              `json:"version"`
	LastSeq     uint64           `json:"last_seq"`
	Compactions int              `json:"compactions,omitempty"`
	Delivered   []deliveredEntry `json:"delivered,omitempty"`
	Loaded      []string         `json:"loaded,omitempty"`
}

type deliveredEntry struct {
	Rule string `json:"rule"`
	Seq  uint64 `json:"seq"`
}

// Marshal encodes the fold, rules sorted by id, so equal states have equal bytes.
func (d *Deliveries) Marshal() ([]byte, error) {
	s := deliveriesSnapshot{Version: DeliveriesVersion, LastSeq: d.lastSeq, Compactions: d.compactions, Loaded: d.loaded}
	for id, seq := range d.delivered {
		s.Delivered = append(s.Delivered, deliveredEntry{Rule: id, Seq: seq})
	}
	slices.SortFunc(s.Delivered, func(a, b deliveredEntry) int { return cmp.Compare(a.Rule, b.Rule) })
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("projections: marshal deliveries: %w", err)
	}
	return b, nil
}

// RestoreDeliveries rebuilds the fold from bytes Marshal wrote: ErrSnapshotVersion for another
// version, ErrSnapshotCorrupt for anything malformed.
func RestoreDeliveries(b []byte) (*Deliveries, error) {
	var s deliveriesSnapshot
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("projections: restore deliveries: %w: %v", ErrSnapshotCorrupt, err)
	}
	if s.Version != DeliveriesVersion {
		return nil, fmt.Errorf("projections: restore deliveries: %w: v%d, this build folds v%d",
			ErrSnapshotVersion, s.Version, DeliveriesVersion)
	}
	if len(s.Delivered) > MaxDelivered || len(s.Loaded) > MaxLoaded || !slices.IsSorted(s.Loaded) {
		return nil, fmt.Errorf("projections: restore deliveries: %w: over the caps or unsorted", ErrSnapshotCorrupt)
	}
	d := NewDeliveries()
	d.lastSeq, d.compactions, d.loaded = s.LastSeq, s.Compactions, s.Loaded
	for _, e := range s.Delivered {
		d.delivered[e.Rule] = e.Seq
	}
	return d, nil
}

// DeliveredCount is how many rules were delivered since the last compaction.
func (d *Deliveries) DeliveredCount() int { return len(d.delivered) }
