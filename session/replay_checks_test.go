package session

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// TestReplayReportsTheFirstFault replays logs with a fault the checks find (a decision written
// against a decision it does not follow) and one the fold finds (a tool call whose payload does
// not decode), in either order. The checks run beside the fold, behind it, yet the replay ends
// at the first fault in the log's order, with the counts and the position of that moment.
func TestReplayReportsTheFirstFault(t *testing.T) {
	db, s, log := decidedReads(t, 12)
	// decisionsBefore counts the decisions before seq; nth finds the seq of the nth event of
	// a type (from 1).
	decisionsBefore := func(seq uint64) int {
		n := 0
		for _, ev := range log[:seq-1] {
			if ev.Type == events.TypeDecision {
				n++
			}
		}
		return n
	}
	nth := func(typ events.Type, n int) uint64 {
		for _, ev := range log {
			if ev.Type == typ {
				if n--; n == 0 {
					return ev.Seq
				}
			}
		}
		t.Fatalf("the log has no %s number %d", typ, n)
		return 0
	}
	// badBase writes the decision at seq against the task's first event; badPayload makes the
	// tool call at seq undecodable.
	badBase := func(log []events.Event, seq uint64) { log[seq-1].Data = againstTheFirst(t, log[seq-1]) }
	badPayload := func(log []events.Event, seq uint64) { log[seq-1].Data = []byte(`{"tool":`) }
	const checksFault = "written against seq 1"

	for _, tc := range []struct {
		name string
		// decision and toolCall number the decision and the tool call made bad (0: none).
		decision, toolCall int
		checks             bool // the checks' fault comes first
	}{
		{name: "the checks' fault first, the fold's long after", decision: 2, toolCall: 11, checks: true},
		{name: "the checks' fault first, the fold's right after", decision: 6, toolCall: 7, checks: true},
		{name: "the fold's fault first, the checks' right after", decision: 7, toolCall: 7},
		{name: "the fold's fault first, the checks' long after", decision: 11, toolCall: 2},
		{name: "the checks' fault alone, the last decision", decision: 12, checks: true},
		{name: "the fold's fault alone", toolCall: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := slices.Clone(log)
			var at uint64
			if tc.decision > 0 {
				seq := nth(events.TypeDecision, tc.decision)
				badBase(bad, seq)
				if tc.checks {
					at = seq
				}
			}
			if tc.toolCall > 0 {
				seq := nth(events.TypeToolCall, tc.toolCall)
				badPayload(bad, seq)
				if !tc.checks {
					at = seq
				}
			}
			rep, err := replay(db, s.Task(), ReplayOptions{}, eventsOf(bad))
			switch {
			case err == nil:
				t.Fatalf("replay of a bad log: %+v, no error", rep)
			case tc.checks != strings.Contains(err.Error(), checksFault):
				t.Fatalf("replay's error %q; want the fault at seq %d first", err, at)
			}
			if rep.Events != at || rep.Decisions != decisionsBefore(at) || rep.Changed != 0 {
				t.Errorf("replay stopped at seq %d after %d decisions (%d changed); want seq %d after %d, none changed",
					rep.Events, rep.Decisions, rep.Changed, at, decisionsBefore(at))
			}
		})
	}
	rep, err := replay(db, s.Task(), ReplayOptions{}, eventsOf(log))
	if err != nil || !rep.OK() || rep.Events != uint64(len(log)) || rep.Decisions != 12 {
		t.Errorf("replay of the log as written: %+v, %v", rep, err)
	}
}

// eventsOf streams evs as a store streams a log.
func eventsOf(evs []events.Event) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// TestReplayStopsAtACheckFault: once a decision's check fails, the fold reads no further than
// the decision after those it had handed over (at most checksAhead, and one it was handing over), and a
// fault of the fold itself (here a Progress that panics) leaves no goroutine of the checks
// behind. A fault of the checks that is a panic reaches the caller.
func TestReplayStopsAtACheckFault(t *testing.T) {
	db, s, log := decidedReads(t, 40)
	var decisions []events.Event
	for _, ev := range log {
		if ev.Type == events.TypeDecision {
			decisions = append(decisions, ev)
		}
	}
	bad := slices.Clone(log)
	bad[decisions[1].Seq-1].Data = againstTheFirst(t, decisions[1])

	var read uint64
	_, err := replay(db, s.Task(), ReplayOptions{Progress: func(seq uint64) { read = seq }}, eventsOf(bad))
	if err == nil || !strings.Contains(err.Error(), "written against seq 1") {
		t.Fatalf("replay of a log whose second decision is written against seq 1: %v", err)
	}
	// Handed over when the check failed: the decisions in the channel, and one the fold was
	// waiting to hand over; it reads one more before it finds the checks failed.
	if limit := decisions[1+checksAhead+2].Seq; read > limit {
		t.Errorf("the fold read on to seq %d after the check of seq %d failed; want it stopped by seq %d",
			read, decisions[1].Seq, limit)
	}

	before := runtime.NumGoroutine()
	func() {
		defer func() {
			if p := recover(); p != "progress fails" {
				t.Errorf("the fold's panic: %v", p)
			}
		}()
		replay(db, s.Task(), ReplayOptions{Progress: func(seq uint64) {
			if seq == decisions[3].Seq+1 {
				panic("progress fails")
			}
		}}, eventsOf(log))
	}()
	// The checks' goroutine ends once it has checked what it was handed.
	for deadline := time.Now().Add(time.Minute); runtime.NumGoroutine() > before; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines a minute after the fold's panic, %d before it", runtime.NumGoroutine(), before)
		}
		runtime.Gosched()
	}

	c := startChecks(&replayer{})
	c.send(check{ev: decisions[0]}) // no rule set: the evaluation panics
	defer func() {
		if p, _ := recover().(string); !strings.Contains(p, "raised by the replay's checks, at:") {
			t.Errorf("a panic of the checks reached the caller as %q", p)
		}
	}()
	c.stop(Report{}, nil)
	t.Error("stop returned after the checks panicked")
}

// decidedReads records, in a new session, n reads of files of services/api, each followed by a
// decision, and returns the database, the session and its log.
func decidedReads(t *testing.T, n int) (store.Store, *Session, []events.Event) {
	t.Helper()
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{})
	for i := range n {
		if _, err := s.ToolCall(ctx, "read_file", fmt.Sprintf("c%d", i), json.RawMessage(fmt.Sprintf(`{"path":"services/api/f%d.ts"}`, i))); err != nil {
			t.Fatal(err)
		}
		decide(t, s)
	}
	var log []events.Event
	for ev, err := range db.Events(ctx, s.Task(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, ev)
	}
	return db, s, log
}

// againstTheFirst is the data of the decision ev written against the task's first event, no
// decision: the checks refuse it ("written against seq 1").
func againstTheFirst(t *testing.T, ev events.Event) []byte {
	t.Helper()
	d, err := ev.Payload()
	if err != nil {
		t.Fatal(err)
	}
	bad := *d.(*events.Decision)
	bad.Base = 1
	wrong, err := events.New(&bad)
	if err != nil {
		t.Fatal(err)
	}
	return wrong.Data
}
