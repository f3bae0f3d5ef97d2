package main

import (
	"context"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session/report"
	"github.com/tasklog/tasklog/store"
)

// decisionSummaries is report.DecisionSummaries: every decision of a task on one line, by seq.
func decisionSummaries(ctx context.Context, db store.Store, task uuid.UUID) (map[uint64]string, error) {
	return report.DecisionSummaries(ctx, db, task)
}

// eventSummary is report.EventSummary: the one-line summary of an event.
func eventSummary(ev events.Event, decisions map[uint64]string) string {
	return report.EventSummary(ev, decisions)
}
