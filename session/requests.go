package session

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// Position names a decision as a user thinks of it: the prompt (user message) it serves and
// its place among that prompt's model requests. The engine decides once per model request (an
// agent rebuilds its prompt for every request, as Cline does), so one prompt has as many
// requests as the agent made while answering it. Prompt 0 holds the requests made before the
// first user message the log recorded (a session's start, or an agent whose hooks never report
// the prompt).
type Position struct {
	// Prompt counts the user messages up to the request, from 1.
	Prompt int `json:"prompt"`
	// Request is the request's ordinal within its prompt, from 1.
	Request int `json:"request"`
}

// String is "prompt 2, request 3".
func (p Position) String() string {
	return fmt.Sprintf("prompt %d, request %d", p.Prompt, p.Request)
}

// Requests numbers a task's decisions by prompt and request. It is a fold over the log in
// order (Add); the envelope's turn of an event is the request it leads up to, so a turn maps to
// a position.
type Requests struct {
	byTurn  []Position // the position of the decision of turn i+1
	seqs    []uint64   // the seq of the decision of turn i+1, ascending
	prompts int        // user messages folded
	cur     int        // requests of the current prompt folded
}

// Add folds one event and returns the request it belongs to: a decision's own; a delivery's is
// the request of its decision (the one it was delivered into); any other event's is the
// request it leads up to.
func (r *Requests) Add(ev events.Event) Position {
	switch ev.Type {
	case events.TypeUserMessage:
		r.prompts++
		r.cur = 0
	case events.TypeDecision:
		r.cur++
		p := Position{r.prompts, r.cur}
		r.byTurn = append(r.byTurn, p)
		r.seqs = append(r.seqs, ev.Seq)
		return p
	case events.TypeDelivery:
		if pl, err := ev.Payload(); err == nil {
			if p, ok := r.OfDecision(pl.(*events.Delivery).Decision); ok {
				return p
			}
		}
	}
	return Position{r.prompts, r.cur + 1}
}

// At is the position of a turn: the decision's for a decided turn, the next request's for the
// turn after the last decision, the zero Position for any other.
func (r *Requests) At(turn int) Position {
	switch {
	case turn >= 1 && turn <= len(r.byTurn):
		return r.byTurn[turn-1]
	case turn == len(r.byTurn)+1:
		return Position{r.prompts, r.cur + 1}
	}
	return Position{}
}

// OfDecision is the position of the decision at seq.
func (r *Requests) OfDecision(seq uint64) (Position, bool) {
	i, ok := slices.BinarySearch(r.seqs, seq)
	if !ok {
		return Position{}, false
	}
	return r.byTurn[i], true
}

// Turn is the turn of a position's decision; ok is false when the log has no such request.
// Request 0 names the prompt's last request.
func (r *Requests) Turn(p Position) (turn int, ok bool) {
	for i := len(r.byTurn) - 1; i >= 0; i-- {
		q := r.byTurn[i]
		if q.Prompt == p.Prompt && (q.Request == p.Request || p.Request == 0) {
			return i + 1, true
		}
	}
	return 0, false
}

// Decided is how many decisions the fold has met.
func (r *Requests) Decided() int { return len(r.byTurn) }

// Prompts is how many user messages the fold has met.
func (r *Requests) Prompts() int { return r.prompts }

// RequestsOf numbers the decisions of a task's whole log.
func RequestsOf(ctx context.Context, er EventReader, task uuid.UUID) (*Requests, error) {
	r := &Requests{}
	for ev, err := range er.Events(ctx, task, 1) {
		if err != nil {
			return nil, err
		}
		if ev.Type == events.TypeUserMessage || ev.Type == events.TypeDecision {
			r.Add(ev)
		}
	}
	return r, nil
}

// TurnOfPrompt is the turn of a prompt's last request; ErrNoDecision when the prompt has no
// decision, the error naming the prompts that have one.
func TurnOfPrompt(ctx context.Context, er EventReader, task uuid.UUID, prompt int) (int, error) {
	r, err := RequestsOf(ctx, er, task)
	if err != nil {
		return 0, err
	}
	if t, ok := r.Turn(Position{Prompt: prompt}); ok {
		return t, nil
	}
	return 0, fmt.Errorf("task %s prompt %d: %w (%s)", task, prompt, ErrNoDecision, r.Describe())
}

// Describe says which prompts have a decision: "its decisions are in prompts 0 to 3".
func (r *Requests) Describe() string {
	if len(r.byTurn) == 0 {
		return "it has no decisions at all"
	}
	first, last := r.byTurn[0].Prompt, r.byTurn[len(r.byTurn)-1].Prompt
	if first == last {
		return fmt.Sprintf("its decisions are all in prompt %d", first)
	}
	return fmt.Sprintf("its decisions are in prompts %d to %d", first, last)
}
