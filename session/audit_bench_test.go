package session

import (
	"context"
	"testing"
)

// BenchmarkAudit audits a task of 10,000 events (100 decisions of 50 rules, 100 context paths),
// as 'replay audit' does less the printing: one read of the log, every decision in full.
func BenchmarkAudit(b *testing.B) {
	ctx := context.Background()
	s := benchSession(b, 10_000, benchRoot(b, "disk"))
	b.ResetTimer()
	for b.Loop() {
		rep, err := Audit(ctx, s.db, s.Task(), AuditOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Requests) < 99 || len(rep.Requests[0].Rules) != 50 {
			b.Fatalf("%d requests of %d rules, want 100 of 50", len(rep.Requests), len(rep.Requests[0].Rules))
		}
	}
}
