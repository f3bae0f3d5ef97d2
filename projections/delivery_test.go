package projections

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tasklog/tasklog/events"
)

func deliveryEvent(t *testing.T, seq uint64, p events.Payload) events.Event {
	t.Helper()
	ev, err := events.New(p)
	if err != nil {
		t.Fatal(err)
	}
	ev.Seq = seq
	return ev
}

func delivered(ids ...string) *events.Delivery {
	d := &events.Delivery{Decision: 1, Agent: "claude-code", Hook: "PreToolUse", Channel: events.ChannelTool,
		Form: events.FormFull, SHA256: fmt.Sprintf("%064d", 0)}
	for _, id := range ids {
		d.Rules = append(d.Rules, events.DeliveredRule{ID: id, Name: id})
	}
	return d
}

func TestDeliveriesFold(t *testing.T) {
	log := []events.Payload{
		&events.UserMessage{Text: "hi"},
		delivered("a", "b"),
		&events.InstructionsLoaded{Path: "/ws/CLAUDE.md"},
		&events.Compaction{Trigger: "auto"},
		delivered("b"),
		&events.InstructionsLoaded{Path: "/ws/A.md"},
	}
	d := NewDeliveries()
	var mid []byte
	for i, p := range log {
		if err := d.Apply(deliveryEvent(t, uint64(i+2), p)); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			var err error
			if mid, err = d.Marshal(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, ok := d.DeliveredAt("a"); ok {
		t.Error("a survived the compaction")
	}
	if seq, ok := d.DeliveredAt("b"); !ok || seq != 6 {
		t.Errorf("b delivered at %d, %v; want seq 6", seq, ok)
	}
	if !d.Loaded("/ws/CLAUDE.md") || !d.Loaded("/ws/A.md") || d.Loaded("/ws/B.md") || d.Compactions() != 1 {
		t.Errorf("loaded %v, compactions %d", d.LoadedPaths(), d.Compactions())
	}
	// Resumed from the snapshot taken after the third event, the tail gives the same state.
	r, err := RestoreDeliveries(mid)
	if err != nil {
		t.Fatal(err)
	}
	for i := 3; i < len(log); i++ {
		if err := r.Apply(deliveryEvent(t, uint64(i+2), log[i])); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := d.Marshal()
	b, _ := r.Marshal()
	if !bytes.Equal(a, b) {
		t.Errorf("resumed state differs:\n%s\n%s", a, b)
	}
	if err := d.Apply(deliveryEvent(t, 3, &events.Compaction{})); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("an old event folded: %v", err)
	}
}

func TestDeliveriesCaps(t *testing.T) {
	d := NewDeliveries()
	for i := range MaxDelivered + 5 {
		if err := d.Apply(deliveryEvent(t, uint64(i+1), delivered(fmt.Sprintf("r%05d", i)))); err != nil {
			t.Fatal(err)
		}
	}
	if d.DeliveredCount() != MaxDelivered {
		t.Fatalf("%d rules kept, want the cap %d", d.DeliveredCount(), MaxDelivered)
	}
	if _, ok := d.DeliveredAt("r00000"); ok {
		t.Error("the oldest delivery was kept over the cap")
	}
}

func TestRestoreDeliveriesRejects(t *testing.T) {
	for _, tc := range []struct {
		data string
		want error
	}{
		{`{"version":2,"last_seq":1}`, ErrSnapshotVersion},
		{`{"version":1,"last_seq":1,"extra":true}`, ErrSnapshotCorrupt},
		{`{"version":1,"last_seq":1,"loaded":["b","a"]}`, ErrSnapshotCorrupt},
		{`not json`, ErrSnapshotCorrupt},
	} {
		if _, err := RestoreDeliveries([]byte(tc.data)); !errors.Is(err, tc.want) {
			t.Errorf("RestoreDeliveries(%s) = %v, want %v", tc.data, err, tc.want)
		}
	}
}

func TestDeliverySeqs(t *testing.T) {
	d := NewDeliveries()
	for i, p := range []events.Payload{delivered("a", "b"), delivered("c"), delivered("a"), &events.UserMessage{Text: "hi"}} {
		if err := d.Apply(deliveryEvent(t, uint64(i+2), p)); err != nil {
			t.Fatal(err)
		}
	}
	// a was sent again at 4: the delivery at 2 still last sent b.
	if got, want := d.DeliverySeqs(), []uint64{4, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("DeliverySeqs = %v, want %v", got, want)
	}
	if err := d.Apply(deliveryEvent(t, 6, &events.Compaction{})); err != nil {
		t.Fatal(err)
	}
	if got := d.DeliverySeqs(); len(got) != 0 {
		t.Errorf("after a compaction DeliverySeqs = %v, want none", got)
	}
}
