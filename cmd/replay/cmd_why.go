package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tasklog/tasklog/session"
)

// cmdWhy explains one rule at one request in plain sentences: applied or not and why, whether
// the agent loaded it, whether tasklog delivered it.
func cmdWhy(args []string, stdout, stderr io.Writer) int {
	f := newFlags("why", "RULE [TASK] [--prompt N [--request M] | --turn N]", stderr).withJSON()
	var at momentFlags
	at.register(f)
	var wf workspaceFlags
	f.StringVar(&wf.Workspace, "workspace", "", "folder holding the first workspace root's files, to name the files that would match (default: the recorded roots, where they exist on this machine)")
	f.Var((*multiFlag)(&wf.Roots), "root", "ROOT=DIR: list the files of the recorded root ROOT from DIR (repeatable)")
	pos, code := f.parseOrExit(args, 1, 2)
	if code >= 0 {
		return code
	}
	// Without --prompt or --turn, the task's last request.
	last := !at.promptSet && at.turn == 0 && at.request == 0
	if !last {
		if code := at.check("why", stderr); code >= 0 {
			return code
		}
	}
	db, task, err := f.openTaskOrLatest(pos[1:], "why", stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	ctx := context.Background()
	turn := at.turn
	if last {
		reqs, err := session.RequestsOf(ctx, db, task)
		if err != nil {
			return fail(stderr, err)
		}
		if turn = reqs.Decided(); turn == 0 {
			fmt.Fprintf(stderr, "replay why: task %s has no decision yet\n", task)
			return exitUsage
		}
	} else if turn, code = at.resolve(ctx, "why", db, task, stderr); code >= 0 {
		return code
	}
	roots, err := wf.AuditRoots(ctx, db, task, false)
	if err != nil {
		return fail(stderr, err)
	}
	w, err := session.Why(ctx, db, task, turn, pos[0], session.AuditOptions{Workspace: roots})
	switch {
	case errors.Is(err, session.ErrNoDecision):
		fmt.Fprintf(stderr, "replay why: %s\n", noDecisionAt(ctx, db, task, turn))
		return exitUsage
	case errors.Is(err, session.ErrNoRule):
		fmt.Fprintf(safeWriter{stderr}, "replay why: %v\n", err)
		return exitUsage
	case err != nil:
		return fail(stderr, err)
	}
	if f.json {
		if err := printJSON(stdout, w); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	fmt.Fprint(safeWriter{stdout}, w)
	return exitOK
}
