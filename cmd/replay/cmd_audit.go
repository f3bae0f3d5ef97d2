package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/session"
)

// cmdAudit answers, for every request of a task, whether each rule applied, whether the agent
// loaded it, whether tasklog delivered it, and the findings: exit 0 with none, 1 with some.
func cmdAudit(args []string, stdout, stderr io.Writer) int {
	f := newFlags("audit", "[TASK] [--workspace DIR | --root ROOT=DIR]... [--findings]", stderr).withJSON()
	var wf workspaceFlags
	f.StringVar(&wf.Workspace, "workspace", "", "folder holding the first workspace root's files, for the never_applicable check (default: the recorded roots, where they exist on this machine)")
	f.Var((*multiFlag)(&wf.Roots), "root", "ROOT=DIR: list the files of the recorded root ROOT from DIR (repeatable)")
	only := f.Bool("findings", false, "print only the findings, not every request's rules")
	pos, code := f.parseOrExit(args, 0, 1)
	if code >= 0 {
		return code
	}
	db, task, err := f.openTaskOrLatest(pos, "audit", stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	ctx := context.Background()
	roots, err := wf.AuditRoots(ctx, db, task, false)
	if err != nil {
		return fail(stderr, err)
	}
	rep, err := session.Audit(ctx, db, task, session.AuditOptions{Workspace: roots})
	if err != nil {
		return fail(stderr, err)
	}
	if f.json {
		if err := printJSON(stdout, rep); err != nil {
			return fail(stderr, err)
		}
	} else {
		printAudit(safeWriter{stdout}, rep, *only)
	}
	if len(rep.Findings) > 0 {
		return exitFailed
	}
	return exitOK
}

// printAudit prints each request's rules side by side, then the findings.
func printAudit(w io.Writer, rep *session.AuditReport, onlyFindings bool) {
	agent := rep.Agent
	if agent == "" {
		agent = "an unnamed runtime"
	}
	fmt.Fprintf(w, "task %s, recorded by %s: %s\n", rep.Task, agent, plural(len(rep.Requests), "request"))
	if rep.AgentLoads == "reported" {
		fmt.Fprintln(w, "agent loads: reported by the agent (instructions_loaded events)")
	} else {
		fmt.Fprintf(w, "agent loads: unknown: %s reports no loads, so AGENT LOADED is \"?\"\n", agent)
	}
	if rep.Workspace.Source == "live" {
		fmt.Fprintf(w, "workspace files: %s listed from the live workspace now (the log does not record them)\n", plural(rep.Workspace.Files, "file"))
	} else {
		fmt.Fprintf(w, "workspace files: %s\n", rep.Workspace.Note)
	}
	if !onlyFindings {
		for _, r := range rep.Requests {
			fmt.Fprintf(w, "\nprompt %d, request %d (turn %d, decision at seq %d)\n", r.Prompt, r.Request, r.Turn, r.Seq)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "  RULE FILE\tTASKLOG\tAGENT LOADED\tDELIVERED\tHELD\tFINDINGS")
			for _, e := range r.Rules {
				kinds := make([]string, len(e.Findings))
				for i, k := range e.Findings {
					kinds[i] = string(k)
				}
				fmt.Fprintf(tw, "  %s\t%s (%s)\t%s\t%s\t%s\t%s\n", orDefault(e.Path, e.Rule), e.Decision, e.Reason, audit.YesNo(e.AgentLoaded),
					audit.YesNo(&e.Delivered), audit.YesNo(e.Held), strings.Join(kinds, ", "))
			}
			tw.Flush()
		}
		fmt.Fprintln(w)
	}
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "no findings")
		return
	}
	fmt.Fprintf(w, "%s:\n", plural(len(rep.Findings), "finding"))
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "  %s: %s\n", f.Severity, f)
	}
}

func orDefault(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
