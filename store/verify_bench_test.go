package store

import (
	"context"
	"testing"
)

// BenchmarkVerify checks the hash chain and id index of the 100k-event read fixture, as
// 'replay verify' does before it replays: the store's share of a verify.
func BenchmarkVerify(b *testing.B) {
	buildReadFixture(b)
	f := &readFixture
	db := openAt(b, f.path, &Options{ReadOnly: true})
	b.ReportAllocs()
	for b.Loop() {
		if err := db.Verify(context.Background(), f.task); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*f.n)/b.Elapsed().Seconds(), "events/s")
}
