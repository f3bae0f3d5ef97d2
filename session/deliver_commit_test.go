package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
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

// DecideAndDeliverInto delivers what DecideAndDeliver delivers and writes the same log, event
// data for event data, in the arrays of the decision handed back: two sessions on the same
// hooks, one with each, the second handing back one decision throughout.
func TestDecideAndDeliverInto(t *testing.T) {
	ctx := context.Background()
	plainDB, intoDB := openDB(t), openDB(t)
	plain, into := openAgentAt(t, plainDB), openAgentAt(t, intoDB)
	defer plain.Close()
	defer into.Close()
	var d Decision
	var arrays *rules.Result
	delivered := 0
	for i, path := range []string{"/ws/src/api/routes.ts", "/ws/src/api/routes.ts", "/ws/docs/guide.md", "/ws/src/api/users.ts"} {
		key := fmt.Sprintf("k\x00%d", i)
		rec := []agentlog.Record{toolRecord(fmt.Sprint(i), path)}
		for _, a := range []*AgentSession{plain, into} {
			if _, err := a.RecordHook(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
		want, wantDel, err := plain.DecideAndDeliver(ctx, "PreToolUse", events.ChannelTool, key)
		if err != nil {
			t.Fatal(err)
		}
		del, err := into.DecideAndDeliverInto(ctx, &d, "PreToolUse", events.ChannelTool, key)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d.Rules, want.Rules) || !reflect.DeepEqual(d.Applied, want.Applied) || d.Seq != want.Seq || d.Turn != want.Turn {
			t.Fatalf("%s: DecideAndDeliverInto decided\n%s\nDecideAndDeliver\n%s", path, mustJSON(t, d.Rules), mustJSON(t, want.Rules))
		}
		if (del == nil) != (wantDel == nil) || del != nil && (del.Text != wantDel.Text || del.Seq != wantDel.Seq) {
			t.Fatalf("%s: DecideAndDeliverInto delivered %+v, DecideAndDeliver %+v", path, del, wantDel)
		}
		if del != nil {
			delivered++
		}
		if arrays == nil {
			arrays = &d.Rules.Results[0]
		} else if &d.Rules.Results[0] != arrays {
			t.Fatalf("%s: DecideAndDeliverInto made a new results array where the one handed back was large enough", path)
		}
	}
	if delivered != 2 {
		t.Errorf("%d deliveries, want 2 (the api rule, then the docs rule): the test needs both", delivered)
	}
	got, want := eventData(t, intoDB, into.Task()), eventData(t, plainDB, plain.Task())
	if !slices.Equal(got, want) {
		t.Errorf("DecideAndDeliverInto wrote\n%s\nDecideAndDeliver\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := into.DecideAndDeliverInto(ctx, nil, "PreToolUse", events.ChannelTool, "k"); err == nil {
		t.Error("DecideAndDeliverInto(nil) did not fail")
	}
}

// eventData is each event of task's log as its type and data.
func eventData(t *testing.T, db store.Store, task uuid.UUID) []string {
	t.Helper()
	var out []string
	for ev, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(ev.Type)+" "+string(ev.Data))
	}
	return out
}

// A decision's record shares with the record before it each list of outcomes that did not
// change and the diagnostics, and is written as the same bytes as a record of its own arrays.
func TestRecordSharesWhatDidNotChange(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), clineWorkspace(), Options{})
	read := func(path string) {
		t.Helper()
		if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(fmt.Sprintf(`{"path":%q}`, path))); err != nil {
			t.Fatal(err)
		}
	}
	read("apps/web/src/App.tsx")
	decide(t, s)
	shared, whole := 0, 0 // lists shared; steps whose lists are both shared
	for _, path := range []string{"docs/README.md", "docs/guide.md", "apps/web/src/pages/index.tsx", "services/api/cart.go"} {
		before := s.last
		read(path)
		decide(t, s)
		after := s.last
		if len(after.Diagnostics) == 0 || &after.Diagnostics[0] != &before.Diagnostics[0] {
			t.Errorf("after %s: the diagnostics are not the record before's (%d of them)", path, len(after.Diagnostics))
		}
		for _, l := range []struct {
			name    string
			was, is []events.RuleOutcome
		}{{"included", before.Included, after.Included}, {"excluded", before.Excluded, after.Excluded}} {
			equal := slices.EqualFunc(l.was, l.is, events.RuleOutcome.Equal)
			same := len(l.is) > 0 && len(l.was) == len(l.is) && &l.was[0] == &l.is[0]
			if equal != same {
				t.Errorf("after %s: %s outcomes equal to the record before's: %v; in its array: %v", path, l.name, equal, same)
			}
			if same {
				shared++
			}
		}
		if len(after.Included) > 0 && len(after.Excluded) > 0 && &after.Included[0] == &before.Included[0] && &after.Excluded[0] == &before.Excluded[0] {
			whole++
		}
		// Written against the record before (where shared arrays take a path of their own), a
		// record of its own arrays is the same bytes. (Written in full, the two are the same
		// values, so the same bytes whatever their arrays.)
		own := *after
		own.Included, own.Excluded = slices.Clone(after.Included), slices.Clone(after.Excluded)
		own.Diagnostics = slices.Clone(after.Diagnostics)
		delta, ok := events.Written(before, after, 1)
		if !ok {
			t.Fatalf("after %s: the record cannot be written against the one before", path)
		}
		ownDelta, _ := events.Written(before, &own, 1)
		ea, err := events.New(delta)
		if err != nil {
			t.Fatal(err)
		}
		eb, err := events.New(ownDelta)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ea.Data, eb.Data) {
			t.Errorf("after %s: the record is written as\n%s\nand with arrays of its own as\n%s", path, ea.Data, eb.Data)
		}
	}
	if shared == 0 || whole == 0 {
		t.Errorf("%d lists of outcomes shared, %d steps sharing both: the scenario does not test sharing (or Written's path for it)", shared, whole)
	}
}
