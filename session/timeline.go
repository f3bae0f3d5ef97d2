package session

import (
	"context"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// TurnSummary is what one turn of a task did, gathered from its events: the prompts, tool
// calls and writes in a line each (events.Summary), the rules its decision included, and how
// many events of every other type it has.
type TurnSummary struct {
	// Turn is the turn's ordinal; Position the prompt and request it serves.
	Turn     int
	Position Position
	// FirstSeq and LastSeq are the sequence numbers of the turn's first and last event.
	FirstSeq, LastSeq uint64
	// Prompts, Calls and Writes summarize the turn's user messages, tool calls and file writes.
	Prompts, Calls, Writes []string
	// Decided is whether the turn has a decision; Rules are the names of the rules it included.
	Decided bool
	Rules   []string
	// Other lists the turn's other event types in order of first appearance; Counts how many
	// events each has.
	Other  []string
	Counts map[string]int
}

// Timeline reads a task's log into one summary per turn, in order.
func Timeline(ctx context.Context, db store.Store, task uuid.UUID) ([]*TurnSummary, error) {
	var turns []*TurnSummary
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return nil, err
		}
		if len(turns) == 0 || turns[len(turns)-1].Turn != ev.Turn {
			turns = append(turns, &TurnSummary{Turn: ev.Turn, FirstSeq: ev.Seq, Counts: map[string]int{}})
		}
		turns[len(turns)-1].add(ev)
	}
	recs, err := Decisions(ctx, db, task)
	if err != nil {
		return nil, err
	}
	reqs := &Requests{}
	if len(recs) > 0 {
		reqs = recs[0].Requests
	}
	for _, t := range turns {
		t.Position = reqs.At(t.Turn)
	}
	i := 0
	for _, rec := range recs {
		for i < len(turns) && turns[i].Turn < rec.Decision.Turn {
			i++
		}
		if i < len(turns) && turns[i].Turn == rec.Decision.Turn {
			for _, o := range rec.Decision.Included {
				turns[i].Rules = append(turns[i].Rules, o.Name)
			}
		}
	}
	return turns, nil
}

func (t *TurnSummary) add(ev events.Event) {
	t.LastSeq = ev.Seq
	switch ev.Type {
	case events.TypeUserMessage:
		t.Prompts = append(t.Prompts, events.Summary(ev))
	case events.TypeToolCall:
		t.Calls = append(t.Calls, events.Summary(ev))
	case events.TypeFileWrite:
		t.Writes = append(t.Writes, events.Summary(ev))
	case events.TypeDecision:
		t.Decided = true
	case events.TypeTaskStarted, events.TypeRulesSnapshot:
	default:
		if t.Counts[string(ev.Type)] == 0 {
			t.Other = append(t.Other, string(ev.Type))
		}
		t.Counts[string(ev.Type)]++
	}
}
