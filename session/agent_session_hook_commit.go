package session

import (
	"context"
	"fmt"

	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

// hookInOneCommit is Hook's record, decide and deliver as one commit, for a hook that triggers a
// delivery with events of its own that the log does not hold yet: the hook waits for one commit
// (one fsync) instead of two. The events are folded first, so that the decision sees them, and
// written with the decision and the delivery; if that write fails, nothing of it is in the log
// and the session is stale: the error wraps ErrStale. done is false, with nothing written or
// folded, when the hook does not qualify (a record already in the log, a redelivery, a store
// that cannot look ids up, an agent that cannot be delivered to, rule files that cannot be
// read): Hook then records and decides in two steps.
func (a *AgentSession) hookInOneCommit(ctx context.Context, h *agentlog.Hook) (text string, done bool, err error) {
	lookup, ok := a.db.(store.EventLookup)
	if !ok || h.Redeliver || a.knownAgent() != nil {
		return "", false, nil
	}
	evs, idx, err := a.hookEvents(h.Records)
	if err != nil || len(evs) == 0 {
		return "", false, err
	}
	trigger := false
	for _, i := range idx {
		trigger = trigger || h.Records[i].Trigger
	}
	if !trigger {
		return "", false, nil
	}
	key := HookDeliveryKey(h, a)
	ids := make([]ulid.ULID, 0, len(evs)+1)
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	ids = append(ids, deliveryID(key))

	s := a.Session
	files, err := s.reader.Collect(s.ws)
	if err != nil {
		return "", false, nil // the two steps record the events, then report it
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stale != nil {
		return "", true, s.stale
	}
	if found, err := lookup.HasEvents(s.task, ids...); err != nil || found {
		return "", false, err
	}
	now := s.opts.Now().UTC()
	turn := s.state.Turn()
	for i := range evs {
		ev := &evs[i]
		ev.Time, ev.Task, ev.Turn, ev.Seq = now, s.task, turn, s.head+uint64(i+1)
	}
	// From here the projection runs ahead of the log until the commit: a failure marks the
	// session stale.
	if err := a.foldAhead(evs); err != nil {
		return "", true, err
	}
	step := &deliveryStep{a: a, hook: h.Event, channel: h.Channel, key: key}
	_, err = s.decideLocked(ctx, files, evs, &a.hookDecision, step.follow)
	if err != nil {
		if s.stale == nil {
			// Failed before the commit was tried (a snapshot's blobs, an encoding), or after
			// it: the projection may hold what the log does not.
			s.stale = fmt.Errorf("%w: %w", ErrStale, err)
		}
		return "", true, s.stale
	}
	if step.del == nil {
		return "", true, nil
	}
	return step.del.Text, true, nil
}

// foldAhead folds a hook's events, their Seq set to follow the log's head, into the projection,
// the Deliveries fold and the count of triggers, before they are written. The caller holds
// s.mu. A fold that fails leaves the session stale.
func (a *AgentSession) foldAhead(evs []events.Event) error {
	for _, ev := range evs {
		if err := a.foldEvent(ev); err != nil {
			a.stale = fmt.Errorf("%w: %w", ErrStale, err)
			return a.stale
		}
	}
	return nil
}
