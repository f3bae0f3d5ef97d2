package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// The status of one file of an import.
const (
	statusImported = "imported"
	statusAlready  = "already_imported"
	statusFailed   = "failed"
	statusSkipped  = "skipped"
)

// importRow is the result of one file of an import, in the order the files were found.
type importRow struct {
	File   string           `json:"file"`
	Status string           `json:"status"`
	Task   string           `json:"task,omitempty"`
	Events uint64           `json:"events"`
	Error  string           `json:"error,omitempty"`
	Reason string           `json:"reason,omitempty"`
	Parent string           `json:"parent,omitempty"`
	Report *agentlog.Report `json:"report,omitempty"`
}

// importAgent turns the sessions under paths, written by the agent from, into tasks, deciding
// every turn against the rules of the folders wf names. It goes on past a file that fails,
// reports every file and exits 1 if any failed; a file already imported (a task whose
// task_started came from it) is left as it is.
func importAgent(f *flags, from string, keep bool, wf *workspaceFlags, paths []string, stdout, stderr io.Writer) int {
	agent, err := agentlog.ParseAgent(from)
	if err != nil {
		return fail(stderr, err)
	}
	home, err := wf.HomeFS()
	if err != nil {
		return fail(stderr, err)
	}
	remote, err := wf.RemoteRules()
	if err != nil {
		return fail(stderr, err)
	}
	var units []string
	var skipped []agentlog.SkippedFile
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return fail(stderr, err)
		}
		if !st.IsDir() || agent == agentlog.Cline && isClineTask(p) {
			units = append(units, p)
			continue
		}
		found, left, err := agentlog.DiscoverAll(agent, p)
		if err != nil {
			return fail(stderr, err)
		}
		units = append(units, found...)
		skipped = append(skipped, left...)
	}
	if len(units) == 0 && len(skipped) == 0 {
		fmt.Fprintf(stderr, "replay import: no %s sessions found under %s: nothing imported\n", agent, strings.Join(paths, ", "))
		return exitOK
	}
	db, err := f.open()
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	imported, err := importedOrigins(db.Store)
	if err != nil {
		return fail(stderr, err)
	}
	var rows []importRow
	failed := 0
	bar := newProgress(stderr, "import", len(units))
	for i, u := range units {
		if task, ok := imported[originKey(u)]; ok {
			rows = append(rows, importRow{File: u, Status: statusAlready, Task: task.Task.String(), Events: task.Events})
			bar.set(i + 1)
			continue
		}
		s, rep, err := session.ImportAgent(context.Background(), db.Store, u, session.AgentImportOptions{
			Agent: agent, Content: agentlog.Options{KeepContent: keep}, Roots: wf.SessionRoots, Home: home, Remote: remote})
		r := importRow{File: u, Status: statusImported, Report: &rep}
		if s != nil {
			r.Task, r.Events = s.Task().String(), s.Version()
			s.Close()
		}
		if err != nil {
			r.Status, r.Error = statusFailed, err.Error()
			failed++
		}
		rows = append(rows, r)
		bar.set(i + 1)
	}
	bar.done()
	for _, sk := range skipped {
		rows = append(rows, importRow{File: sk.File, Status: statusSkipped, Reason: sk.Reason, Parent: sk.Parent})
	}
	status := exitOK
	if failed > 0 {
		status = exitFailed
	}
	if f.json {
		if err := printJSON(stdout, rows); err != nil {
			return fail(stderr, err)
		}
		return status
	}
	for _, r := range rows {
		printImportRow(stdout, r)
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "replay import: %s of %d failed\n", plural(failed, "file"), len(units))
	}
	return status
}

func printImportRow(w io.Writer, r importRow) {
	w = safeWriter{w}
	switch r.Status {
	case statusImported:
		fmt.Fprintf(w, "%s\t%s\t%s, %s, %s, %d skipped\n", r.File, r.Task, plural(int(r.Events), "event"),
			plural(r.Report.Turns, "turn"), plural(r.Report.Records, "record"), skippedTotal(*r.Report))
	case statusAlready:
		fmt.Fprintf(w, "%s\t%s\talready imported (%s), left as it is\n", r.File, r.Task, plural(int(r.Events), "event"))
	case statusFailed:
		task := r.Task
		if task == "" {
			task = "-"
		}
		fmt.Fprintf(w, "%s\t%s\tfailed: %s\n", r.File, task, r.Error)
	case statusSkipped:
		parent := ""
		if r.Parent != "" {
			parent = " of " + r.Parent
		}
		fmt.Fprintf(w, "%s\t-\tskipped: %s%s, not imported on its own\n", r.File, r.Reason, parent)
	}
}

// importedOrigins maps the origin of every task's task_started (its file, and for a Cline task
// file its folder too) to the task.
func importedOrigins(db store.Store) (map[string]store.TaskInfo, error) {
	tasks, err := db.Tasks()
	if err != nil {
		return nil, err
	}
	out := map[string]store.TaskInfo{}
	for _, t := range tasks {
		origin, err := startOrigin(db, t.Task)
		if err != nil {
			return nil, err
		}
		if origin == "" {
			continue
		}
		out[originKey(origin)] = t
		if base := filepath.Base(origin); base == "ui_messages.json" || base == "api_conversation_history.json" {
			out[originKey(filepath.Dir(origin))] = t
		}
	}
	return out, nil
}

// startOrigin is the file a task's task_started was imported from, or "".
func startOrigin(db store.Store, task uuid.UUID) (string, error) {
	for ev, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			return "", err
		}
		if ev.Type != events.TypeTaskStarted || ev.Origin == nil {
			return "", nil
		}
		return ev.Origin.File, nil
	}
	return "", nil
}

// originKey spells a file the same way however it was given.
func originKey(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
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
