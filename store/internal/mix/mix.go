// Package mix is the realistic mix of events the stores' benchmarks of disk usage write.
package mix

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
)

// mixJSONL is a coding session as the hooks record it: one Claude Code session of 30 prompts
// and 600 tool calls (reads, edits, shell commands), recorded by 'replay hook claude-code' over
// a workspace holding the rule files of the shared samples (114 files of Claude Code, Cline,
// Cursor, Copilot and Windsurf rules and an AGENTS.md), with the workspace's path rewritten
// to /home/dev/shop. Its first six lines are decisions of that session: three written in full
// (67–87 KB) and three written against the decision before them (12–18 KB); the other 849
// lines are its events besides the decisions, in the order they were recorded.
//
//go:embed testdata/mix.jsonl
var mixJSONL []byte

// mixDecisions is how many of mixJSONL's first lines are decisions.
const mixDecisions = 6

// Realistic returns n events of a realistic recorded mix and the bytes of their payloads:
// the recorded session's events in their order, over and over, with one event in a hundred a
// decision, the recorded ones in turn (on average 47 KB: full ones alternating with ones
// written against their base). The events have ids, times and turns, and no task; the same n
// gives the same events. As in a task the hooks record, the decisions' ids grow with time and
// the other events' ids are hashes.
func Realistic(tb testing.TB, n int) (evs []events.Event, payloadBytes int) {
	tb.Helper()
	var decisions, others []events.Event
	sc := bufio.NewScanner(bytes.NewReader(mixJSONL))
	sc.Buffer(nil, events.MaxLineBytes)
	for sc.Scan() {
		l, err := events.ParseLine(sc.Bytes())
		if err != nil {
			tb.Fatalf("testdata/mix.jsonl: %v", err)
		}
		if len(decisions) < mixDecisions {
			decisions = append(decisions, l.Event)
		} else {
			others = append(others, l.Event)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	evs = make([]events.Event, n)
	d, o := 0, 0
	for i := range evs {
		var ev events.Event
		if i%100 == 99 {
			ev, d = decisions[d%len(decisions)], d+1
		} else {
			ev, o = others[o%len(others)], o+1
		}
		ev.Time = start.Add(time.Duration(i) * 300 * time.Millisecond)
		if i%100 == 99 {
			// A decision's id is the session's: it grows with time.
			ev.ID = ulid.MustNew(ulid.Timestamp(ev.Time), mixEntropy(i))
		} else {
			// A hook's events get ids hashed from their keys (a tool call's id, a prompt's
			// session and time), spread over the whole key space.
			sum := sha256.Sum256(fmt.Appendf(nil, "mix hook event %d", i))
			ev.ID = ulid.ULID(sum[:16])
		}
		ev.Turn = 1 + i/40
		evs[i] = ev
		payloadBytes += len(ev.Data)
	}
	return evs, payloadBytes
}

// mixEntropy makes the mix's ids reproducible and as random as a runtime's.
type mixEntropy uint64

func (m mixEntropy) Read(p []byte) (int, error) {
	x := uint64(m)*0x9E3779B97F4A7C15 + 1
	for i := range p {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		p[i] = byte(x)
	}
	return len(p), nil
}
