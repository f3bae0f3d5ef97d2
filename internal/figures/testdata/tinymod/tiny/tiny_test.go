// Package tiny has benchmarks that take no time, for the figures program's own test.
package tiny

import (
	"strings"
	"testing"
)

var sink string

// BenchmarkJoin joins three strings and reports a metric of its own.
func BenchmarkJoin(b *testing.B) {
	for b.Loop() {
		sink = strings.Join([]string{"a", "b", "c"}, "/")
	}
	b.ReportMetric(42, "answers/op")
}

// BenchmarkSkipped is skipped, as a benchmark without its input is.
func BenchmarkSkipped(b *testing.B) {
	b.Skip("input not found: set TINY_INPUT")
}
