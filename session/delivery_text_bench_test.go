package session

import (
	"context"
	"testing"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
)

// BenchmarkDeliveryTextRealistic renders again the last delivery of a task recorded as hooks
// record one (100k events over the samples' rules), made after a compaction at its end, as a
// hook that runs again after its delivery does to print the same text. Skipped with -short or
// without the samples.
func BenchmarkDeliveryTextRealistic(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 100k-event task; skipped with -short")
	}
	ctx := context.Background()
	db := openDB(b)
	a := openRealisticAgent(b, db, sampleRulesWorkspace(b), "realistic")
	defer a.Close()
	for i := 0; a.Version() < 100_000; i++ {
		recordRealisticTurn(b, ctx, a, i)
	}
	// After a compaction the rules are delivered again: the task's last delivery is at its end.
	if _, err := a.RecordHook(ctx, []agentlog.Record{{Key: "compact", Payload: &events.Compaction{Trigger: "auto"}}}); err != nil {
		b.Fatal(err)
	}
	_, del, err := a.DecideAndDeliver(ctx, "PreToolUse", events.ChannelTool, "after the compaction")
	if err != nil || del == nil {
		b.Fatalf("the delivery after the compaction: %+v, %v", del, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DeliveryText(ctx, db, a.Task(), del.Seq); err != nil {
			b.Fatal(err)
		}
	}
}
