package otelexport

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
)

// Trace reads a task's log and its audit and maps them to spans (Map), with the times the log
// recorded. The audit lists no workspace: a trace holds what the log alone says.
func Trace(ctx context.Context, lr session.LogReader, task uuid.UUID, opts Options) ([]Span, error) {
	var log []events.Event
	for ev, err := range lr.Events(ctx, task, 1) {
		if err != nil {
			return nil, fmt.Errorf("trace of task %s: %w", task, err)
		}
		log = append(log, ev)
	}
	rep, err := session.Audit(ctx, lr, task, session.AuditOptions{})
	if err != nil {
		return nil, fmt.Errorf("trace of task %s: audit: %w", task, err)
	}
	return Map(task, log, rep.Findings, opts)
}

// Export sends a recorded task's trace, batch by batch, and returns how many spans were sent.
func Export(ctx context.Context, lr session.LogReader, task uuid.UUID, s Sender, opts Options) (int, error) {
	spans, err := Trace(ctx, lr, task, opts)
	if err != nil {
		return 0, err
	}
	for i := 0; i < len(spans); i += batchSize {
		batch := spans[i:min(i+batchSize, len(spans))]
		if err := s.Export(ctx, batch); err != nil {
			return i, fmt.Errorf("task %s: %w", task, err)
		}
	}
	return len(spans), nil
}
