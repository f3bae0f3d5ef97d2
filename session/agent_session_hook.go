package session

import (
	"context"
	"fmt"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

// Hook is what one hook payload does to its task, whoever runs it ('replay hook' with the
// database itself, or the resident server): record its events once and, when deliver is set,
// the event's reply reaches the model and it brought something new (or follows a compaction),
// decide and deliver. A hook whose events are all new records, decides and delivers in one
// commit (see hookInOneCommit); otherwise the decision and the delivery are one commit after
// the record's. It returns the delivered text, "" when nothing was delivered; the dialect's
// reply is h.Reply of it. The same hook run again records nothing and returns "": an agent that
// runs two hooks for one event (Codex runs its user and its project hooks) gives the model the
// rules once.
func (a *AgentSession) Hook(ctx context.Context, h *agentlog.Hook, deliver bool) (string, error) {
	return a.hook(ctx, h, deliver, false)
}

// HookAgain is Hook for a payload handled a second time because its first handling may have
// recorded the delivery without the reply reaching the agent (the server died in the middle of
// the request, or did not answer in time): when the log holds this hook's own delivery, it
// returns its text again, so the log never claims a delivery no hook printed.
func (a *AgentSession) HookAgain(ctx context.Context, h *agentlog.Hook) (string, error) {
	return a.hook(ctx, h, true, true)
}

func (a *AgentSession) hook(ctx context.Context, h *agentlog.Hook, deliver, again bool) (string, error) {
	if deliver && h.Channel != "" {
		if text, done, err := a.hookInOneCommit(ctx, h); done || err != nil {
			return text, err
		}
	}
	fresh, err := a.RecordHook(ctx, h.Records)
	if err != nil {
		return "", err
	}
	trigger := h.Redeliver && a.redeliveryDue(h, fresh)
	seen := h.Redeliver && !trigger
	for i, r := range h.Records {
		trigger = trigger || (r.Trigger && fresh[i])
		seen = seen || (r.Trigger && !fresh[i])
	}
	if !deliver || h.Channel == "" {
		return "", nil
	}
	if !trigger {
		if again && seen {
			return a.deliveredBefore(ctx, h)
		}
		return "", nil
	}
	_, del, err := a.decideAndDeliver(ctx, &a.hookDecision, h.Event, h.Channel, HookDeliveryKey(h, a))
	if err != nil || del == nil {
		return "", err
	}
	return del.Text, nil
}

// deliveredBefore is the text of this hook's own delivery when the log holds it already (see
// HookAgain). A delivery of another hook with the same key (the PreToolUse before this
// PostToolUse) is not this hook's: "" then.
func (a *AgentSession) deliveredBefore(ctx context.Context, h *agentlog.Hook) (string, error) {
	id := deliveryID(HookDeliveryKey(h, a))
	if lookup, ok := a.db.(store.EventLookup); ok {
		if found, err := lookup.HasEvents(a.task, id); err != nil || !found {
			return "", err
		}
	}
	a.mu.Lock()
	seqs := a.dlv.DeliverySeqs()
	a.mu.Unlock()
	for _, seq := range seqs {
		ev, err := eventAt(ctx, a.db, a.task, seq)
		if err != nil {
			return "", err
		}
		if ev.ID != id {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			return "", err
		}
		d, ok := p.(*events.Delivery)
		if !ok || d.Hook != h.Event || d.Channel != h.Channel {
			return "", nil
		}
		text, err := deliveryText(ctx, a.db, a.task, seq, d)
		if err != nil {
			return "", fmt.Errorf("print again the delivery at seq %d: %w", seq, err)
		}
		return text, nil
	}
	return "", nil
}

// redeliveryDue tells whether a hook that follows a compaction should deliver again: when it
// recorded the compaction now, or nothing was delivered since the last compaction (its
// redelivery is missing). A repeated copy of the hook after the redelivery writes nothing.
func (a *AgentSession) redeliveryDue(h *agentlog.Hook, fresh []bool) bool {
	for i, r := range h.Records {
		if _, ok := r.Payload.(*events.Compaction); ok && fresh[i] {
			return true
		}
	}
	compactions, delivered := a.deliveryCounts()
	return compactions > 0 && delivered == 0
}

// deliveryCounts reads the Deliveries fold's count of compactions and of rules delivered since
// the last, under s.mu: a decision of another hook may be folding its delivery.
func (a *AgentSession) deliveryCounts() (compactions, delivered int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dlv.Compactions(), a.dlv.DeliveredCount()
}

// HookDeliveryKey is the idempotency key of a hook's delivery: its first trigger record's, or
// for a redelivery after a compaction, the agent session and the number of compactions. Every
// path that handles hooks uses it, so a payload handled twice delivers once.
func HookDeliveryKey(h *agentlog.Hook, a *AgentSession) string {
	for _, r := range h.Records {
		if r.Trigger {
			return r.Key
		}
	}
	compactions, _ := a.deliveryCounts()
	return fmt.Sprintf("%s\x00%s\x00redeliver\x00%d", h.Agent, h.SessionID, compactions)
}
