package main

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrNoBenchmark is a row's benchmark missing from the output of its run.
var ErrNoBenchmark = errors.New("not in the benchmark output: was it renamed or removed? fix its row in internal/figures/rows.go")

// ErrNoMetric is a benchmark that ran but did not report the unit a row shows.
var ErrNoMetric = errors.New("the benchmark does not report this unit: fix its row in internal/figures/rows.go")

// Kind is how a metric's values are written.
type Kind int

const (
	// Duration values are nanoseconds, written in ns, µs, ms or s.
	Duration Kind = iota
	// Bytes values are bytes, written in B, KB, MB or GB (of 1,024).
	Bytes
	// Rate values are counts, written with k or M before the metric's label ("318–330k events/s").
	Rate
	// Number values are written as they are, before the metric's label.
	Number
	// Ratio values are written with a × after them.
	Ratio
)

// Metric is a unit a benchmark reports and how a figure shows it.
type Metric struct {
	Unit  string  // as the benchmark reports it: "ns/op", "p50-µs", "events/s"
	Kind  Kind    // how it is written
	Scale float64 // multiplies a value into the kind's base unit (µs → ns: 1e3); 0 means 1
	Label string  // written after a Rate or Number: "events/s"
}

// Common metrics.
var (
	NsOp  = Metric{Unit: "ns/op", Kind: Duration}
	BOp   = Metric{Unit: "B/op", Kind: Bytes}
	P50us = Metric{Unit: "p50-µs", Kind: Duration, Scale: 1e3}
	P99us = Metric{Unit: "p99-µs", Kind: Duration, Scale: 1e3}
	P50ms = Metric{Unit: "p50-ms", Kind: Duration, Scale: 1e6}
	P99ms = Metric{Unit: "p99-ms", Kind: Duration, Scale: 1e6}
	EvS   = Metric{Unit: "events/s", Kind: Rate, Label: "events/s"}
)

// Named is the metric with the unit name+m.Unit ("replay-" + "p50-ms"), as benchmarks that
// report several series name them.
func (m Metric) Named(prefix string) Metric {
	m.Unit = prefix + m.Unit
	return m
}

// Per is the metric divided by n, with its label: allocated bytes per event of a 10k-event fold.
func (m Metric) Per(n float64) Metric {
	if m.Scale == 0 {
		m.Scale = 1
	}
	m.Scale /= n
	return m
}

// FormatRange writes the smallest and the largest of values in the metric's units, as
// "0.41–1.10 ms", or one figure when both read the same. The unit is chosen by the largest.
func FormatRange(m Metric, values []float64) string {
	if len(values) == 0 {
		return "no value"
	}
	scale := m.Scale
	if scale == 0 {
		scale = 1
	}
	lo, hi := slices.Min(values)*scale, slices.Max(values)*scale
	div, prefix, suffix := unitFor(m, math.Max(math.Abs(lo), math.Abs(hi)))
	a, b := number(lo/div), number(hi/div)
	nums := a
	if a != b {
		nums = a + "–" + b
	}
	switch m.Kind {
	case Ratio:
		return nums + "×"
	case Rate:
		return strings.TrimSpace(nums + prefix + " " + m.Label)
	case Number:
		return strings.TrimSpace(nums + " " + m.Label)
	}
	return nums + " " + suffix
}

// unitFor is what to divide values of the metric's kind by, and the prefix (Rate) or the unit
// (Duration, Bytes) to write, for values up to max.
func unitFor(m Metric, max float64) (div float64, prefix, unit string) {
	switch m.Kind {
	case Duration:
		switch {
		case max >= 1e9:
			return 1e9, "", "s"
		case max >= 1e6:
			return 1e6, "", "ms"
		case max >= 1e3:
			return 1e3, "", "µs"
		}
		return 1, "", "ns"
	case Bytes:
		switch {
		case max >= 1<<30:
			return 1 << 30, "", "GB"
		case max >= 1<<20:
			return 1 << 20, "", "MB"
		case max >= 1<<10:
			return 1 << 10, "", "KB"
		}
		return 1, "", "B"
	case Rate:
		switch {
		case max >= 1e6:
			return 1e6, "M", ""
		case max >= 1e3:
			return 1e3, "k", ""
		}
	}
	return 1, "", ""
}

// number writes v with three significant figures at most (two decimals below 10, one below
// 100, none above), without trailing zeros after the point.
func number(v float64) string {
	prec := 0
	switch a := math.Abs(v); {
	case a < 10:
		prec = 2
	case a < 100:
		prec = 1
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
