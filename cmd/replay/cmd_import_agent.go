package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
)

// importAgent turns the sessions under paths, written by the agent from, into tasks, deciding
// every turn against the rules of the folders wf names.
func importAgent(f *flags, from string, keep bool, wf *workspaceFlags, paths []string, stdout, stderr io.Writer) int {
	agent, err := agentlog.ParseAgent(from)
	if err != nil {
		return fail(stderr, err)
	}
	home, err := wf.homeFS()
	if err != nil {
		return fail(stderr, err)
	}
	remote, err := wf.remoteRules()
	if err != nil {
		return fail(stderr, err)
	}
	var units []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return fail(stderr, err)
		}
		if !st.IsDir() || agent == agentlog.Cline && isClineTask(p) {
			units = append(units, p)
			continue
		}
		found, err := agentlog.Discover(agent, p)
		if err != nil {
			return fail(stderr, err)
		}
		units = append(units, found...)
	}
	type row struct {
		File   string          `json:"file"`
		Task   string          `json:"task"`
		Events uint64          `json:"events"`
		Report agentlog.Report `json:"report"`
	}
	if len(units) == 0 {
		fmt.Fprintf(stderr, "replay import: no %s sessions found under %s: nothing imported\n", agent, strings.Join(paths, ", "))
		return exitOK
	}
	db, err := f.open()
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	var rows []row
	bar := newProgress(stderr, "import", len(units))
	for i, u := range units {
		s, rep, err := session.ImportAgent(context.Background(), db.DB, u, session.AgentImportOptions{
			Agent: agent, Content: agentlog.Options{KeepContent: keep}, Roots: wf.sessionRoots, Home: home, Remote: remote})
		if err != nil {
			bar.done()
			return fail(stderr, err)
		}
		rows = append(rows, row{File: u, Task: s.Task().String(), Events: s.Version(), Report: rep})
		s.Close()
		bar.set(i + 1)
	}
	bar.done()
	if f.json {
		if err := printJSON(stdout, rows); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	for _, r := range rows {
		fmt.Fprintf(stdout, "%s\t%s\t%s, %s, %s, %d skipped\n", r.File, r.Task, plural(int(r.Events), "event"),
			plural(r.Report.Turns, "turn"), plural(r.Report.Records, "record"), skippedTotal(r.Report))
	}
	return exitOK
}

func skippedTotal(r agentlog.Report) int {
	n := 0
	for _, c := range r.Skipped {
		n += c.N
	}
	return n
}

func isClineTask(dir string) bool {
	_, err := os.Stat(dir + "/ui_messages.json")
	if err == nil {
		return true
	}
	_, err = os.Stat(dir + "/api_conversation_history.json")
	return err == nil
}
