package session

import (
	"context"
	"fmt"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
)

// Hook is what one hook payload does to its task, whoever runs it ('replay hook' with the
// database itself, or the resident server): record its events once and, when deliver is set,
// the event's reply reaches the model and it brought something new (or follows a compaction),
// decide and deliver. A hook whose events are all new records, decides and delivers in one
// commit (see hookInOneCommit); otherwise the decision and the delivery are one commit after
// the record's. It returns the delivered text, "" when nothing was delivered; the dialect's
// reply is h.Reply of it.
func (a *AgentSession) Hook(ctx context.Context, h *agentlog.Hook, deliver bool) (string, error) {
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
	for i, r := range h.Records {
		trigger = trigger || (r.Trigger && fresh[i])
	}
	if !deliver || h.Channel == "" || !trigger {
		return "", nil
	}
	_, del, err := a.DecideAndDeliver(ctx, h.Event, h.Channel, HookDeliveryKey(h, a))
	if err != nil || del == nil {
		return "", err
	}
	return del.Text, nil
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
	return a.dlv.Compactions() > 0 && a.dlv.DeliveredCount() == 0
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
	return fmt.Sprintf("%s\x00%s\x00redeliver\x00%d", h.Agent, h.SessionID, a.Deliveries().Compactions())
}
