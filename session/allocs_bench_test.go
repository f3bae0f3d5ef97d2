package session

import (
	"runtime"
	"strings"
	"testing"
)

// decideFrame is the function every allocation of a decision has on its stack.
const decideFrame = "github.com/tasklog/tasklog/session.(*Session).decide"

// allocRuns is how many calls reportDecideAllocs counts: a multiple of the 256 events after
// which a session writes its projection snapshot (of 128 calls that each record a tool call and
// decide, of 256 that only decide), so that the snapshots are counted at the rate decisions
// pay for them whatever the phase the count starts in.
const allocRuns = 512

// reportDecideAllocs runs body n times with every allocation recorded and reports the bytes a
// decision allocated per call in bbolt's code (bbolt-B/op: the page and node copies of its
// commit, which the choice of bbolt sets) and in tasklog's (tasklog-B/op), as benchmark
// metrics. An allocation counts for a decision when Session.decide is on its stack, so that
// what body does besides deciding (recording a tool call) does not count; it counts for bbolt
// when the innermost frame of bbolt or tasklog above the allocation is bbolt's. Recording every
// allocation is slow: call it with the timer stopped, after the timed loop.
func reportDecideAllocs(b *testing.B, n int, body func()) {
	bbolt, own := decideAllocs(n, body)
	b.ReportMetric(bbolt, "bbolt-B/op")
	b.ReportMetric(own, "tasklog-B/op")
}

// decideAllocs is the bytes per call of body that reportDecideAllocs reports.
func decideAllocs(n int, body func()) (bbolt, own float64) {
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = rate }()
	// A sampling distance drawn at the old rate may still be pending on each P: allocate past
	// it before the first count.
	for range 64 {
		sink = make([]byte, 64<<10)
	}
	sink = nil
	for range max(n/10, 1) {
		body()
	}
	before := allocsByStack()
	for range n {
		body()
	}
	after := allocsByStack()
	var inBolt, inTasklog int64
	for stack, bytes := range after {
		bytes -= before[stack]
		if bytes == 0 {
			continue
		}
		switch decideOwner(stack) {
		case "bbolt":
			inBolt += bytes
		case "tasklog":
			inTasklog += bytes
		}
	}
	return float64(inBolt) / float64(n), float64(inTasklog) / float64(n)
}

var sink []byte

// allocsByStack is the bytes allocated so far at each stack the memory profile records.
func allocsByStack() map[[32]uintptr]int64 {
	// The profile is published by garbage collections: two make it current.
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	out := make(map[[32]uintptr]int64, len(recs))
	for _, r := range recs {
		out[r.Stack0] += r.AllocBytes
	}
	return out
}

// decideOwner says whose code made an allocation of a decision: "bbolt" or "tasklog", or ""
// when the stack does not pass through Session.decide.
func decideOwner(stack [32]uintptr) string {
	pcs := stack[:]
	for i, pc := range pcs {
		if pc == 0 {
			pcs = pcs[:i]
			break
		}
	}
	// A stack the profile cut at its 32 frames has lost its outer frames, Session.decide's
	// among them when it is deep (bbolt's commit under it): between the two counts only the
	// body runs, so such a stack is the body's too, when a frame of tasklog or bbolt is left in
	// it to own it (a cut stack of other code has no owner and is not counted).
	owner, inDecide := "", len(pcs) == len(stack)
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		switch {
		case f.Function == decideFrame:
			inDecide = true
		case owner != "":
		case strings.HasPrefix(f.Function, "go.etcd.io/bbolt"):
			owner = "bbolt"
		case strings.HasPrefix(f.Function, "github.com/tasklog/tasklog/"):
			owner = "tasklog"
		}
		if !more {
			break
		}
	}
	if !inDecide {
		return ""
	}
	return owner
}
