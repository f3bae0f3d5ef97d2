package session

import (
	"context"
	"testing"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
)

// DecideAndDeliver writes the decision and its delivery in one commit, right after each other,
// with the delivery's idempotency id, and delivers what Decide and Deliver would: the scoped
// rule once, then nothing until something new applies. A reopened session knows it delivered.
func TestDecideAndDeliverOneCommit(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	a := openAgent(t, db, agentlog.ClaudeCode)
	if _, err := a.RecordHook(ctx, []agentlog.Record{toolRecord("1", "/ws/src/api/routes.ts")}); err != nil {
		t.Fatal(err)
	}
	d, del, err := a.DecideAndDeliver(ctx, "PreToolUse", events.ChannelTool, "k\x001")
	if err != nil {
		t.Fatal(err)
	}
	if del == nil || len(del.Event.Rules) != 1 || del.Event.Rules[0].Name != "api" {
		t.Fatalf("delivery = %+v, want the api rule", del)
	}
	if del.Seq != d.Seq+1 || a.Version() != del.Seq {
		t.Errorf("decision at seq %d, delivery at %d, head %d: want the delivery right after the decision, last", d.Seq, del.Seq, a.Version())
	}
	var got []events.Event
	for ev, err := range db.Events(ctx, a.Task(), d.Seq) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if len(got) != 2 || got[0].Type != events.TypeDecision || got[1].Type != events.TypeDelivery {
		t.Fatalf("log after the decision: %v, want the decision and its delivery", got)
	}
	if got[1].ID != HookEventID("k\x001\x00delivery") {
		t.Errorf("delivery id %s, want the hook's idempotency id", got[1].ID)
	}
	text, err := DeliveryText(ctx, db, a.Task(), del.Seq)
	if err != nil || text != del.Text {
		t.Errorf("DeliveryText = %q, %v; want the text the hook replied with", text, err)
	}
	if _, ok := a.Deliveries().DeliveredAt(del.Event.Rules[0].ID); !ok {
		t.Error("the session's Deliveries fold does not know the rule was delivered")
	}
	// Nothing new: the next decision is written alone.
	if _, err := a.RecordHook(ctx, []agentlog.Record{toolRecord("2", "/ws/src/api/routes.ts")}); err != nil {
		t.Fatal(err)
	}
	d2, del2, err := a.DecideAndDeliver(ctx, "PreToolUse", events.ChannelTool, "k\x002")
	if err != nil || del2 != nil || a.Version() != d2.Seq {
		t.Fatalf("second DecideAndDeliver = %+v, %v (head %d, decision %d), want no delivery", del2, err, a.Version(), d2.Seq)
	}
	a.Close()
	b := openAgent(t, db, agentlog.ClaudeCode)
	defer b.Close()
	if _, ok := b.Deliveries().DeliveredAt(del.Event.Rules[0].ID); !ok {
		t.Error("a reopened session does not know the rule was delivered")
	}
}
