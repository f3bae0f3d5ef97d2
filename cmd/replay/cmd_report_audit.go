package main

import (
	"context"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// reportAuditRequest is one request of the report's audit table: replay audit's rows for it.
type reportAuditRequest struct {
	Index    int // the request's column in the grid
	Position session.Position
	Turn     int
	Seq      uint64
	Rules    []reportAuditRule
	// Findings counts the findings of its rows.
	Findings int
	// Shown is the request the page shows before a cell is selected: the last.
	Shown bool
}

// reportAuditRule is one rule file at one request, as replay audit prints it.
type reportAuditRule struct {
	Rule, Path, Decision, Reason, Detail string
	AgentLoaded, Held                    string // "yes", "no" or "?"
	Delivered                            bool
	Findings                             []string
}

// addAudit puts the audit's columns into the cells, its rows into the audit table and its
// findings into the page. Names, paths and reasons come from the log: control characters are
// escaped here, and the template escapes the HTML.
func addAudit(ctx context.Context, db store.Store, task uuid.UUID, data *reportData, rows map[string]*reportRow) error {
	roots, err := (&session.Folders{}).AuditRoots(ctx, db, task, true)
	if err != nil {
		return err
	}
	rep, err := session.Audit(ctx, db, task, session.AuditOptions{Workspace: roots})
	if err != nil {
		return err
	}
	data.AgentLoads = rep.AgentLoads
	for i, req := range rep.Requests {
		ar := reportAuditRequest{Index: i, Position: session.Position{Prompt: req.Prompt, Request: req.Request},
			Turn: req.Turn, Seq: req.Seq}
		for _, e := range req.Rules {
			row := reportAuditRule{Rule: escapeControls(e.Rule), Path: escapeControls(e.Path), Decision: e.Decision,
				Reason: escapeControls(e.Reason), Detail: escapeControls(e.Detail),
				AgentLoaded: yesNo(e.AgentLoaded), Held: yesNo(e.Held), Delivered: e.Delivered}
			for _, k := range e.Findings {
				row.Findings = append(row.Findings, string(k))
			}
			ar.Findings += len(row.Findings)
			ar.Rules = append(ar.Rules, row)
			r := rows[e.ID]
			if r == nil || i >= len(r.Cells) {
				continue
			}
			c := &r.Cells[i]
			c.AgentLoaded, c.Held, c.Findings = row.AgentLoaded, row.Held, row.Findings
		}
		ar.Shown = i == len(rep.Requests)-1
		data.Audit = append(data.Audit, ar)
	}
	for _, f := range rep.Findings {
		f.Evidence, f.Rule, f.Path = escapeControls(f.Evidence), escapeControls(f.Rule), escapeControls(f.Path)
		data.Findings = append(data.Findings, f)
	}
	return nil
}
