package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
)

// cmdImport reads JSON Lines logs, or with --from an agent's sessions (cmd_import_agent.go).
func cmdImport(args []string, stdout, stderr io.Writer) int {
	f := newFlags("import", "FILE.jsonl... | --from cline|claude-code|pi|codex PATH... [--workspace DIR | --root ORIGINAL=DIR]", stderr).withJSON()
	from := f.String("from", "", "import sessions of this agent instead of JSON Lines logs: cline, claude-code, pi or codex")
	keep := f.Bool("keep-content", false, "with --from: keep large payloads (file contents, tool outputs) instead of their length and SHA-256")
	var wf workspaceFlags
	wf.register(f)
	files, code := f.parseOrExit(args, 1, -1)
	if code >= 0 {
		return code
	}
	if *from != "" {
		return importAgent(f, *from, *keep, &wf, files, stdout, stderr)
	}
	if *keep || wf.workspace != "" || len(wf.roots) > 0 || wf.home != "" || wf.remote != "" {
		fmt.Fprintln(stderr, "replay import: --keep-content, --workspace, --root, --home and --remote-rules go with --from;"+
			" a JSON Lines log already holds its decisions")
		return exitUsage
	}
	db, err := f.open()
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	var all []session.Imported
	for _, name := range files {
		in, err := os.Open(name)
		if err != nil {
			return fail(stderr, err)
		}
		got, err := session.Import(context.Background(), db, bufio.NewReader(in), name,
			session.ImportOptions{Now: time.Now})
		in.Close()
		if err != nil {
			return fail(stderr, err)
		}
		all = append(all, got...)
		if !f.json {
			for _, t := range got {
				fmt.Fprintf(stdout, "%s\t%s\t%d events, %d new\n", name, t.Task, t.Events, t.Appended)
			}
		}
	}
	if f.json {
		type row struct {
			Task     string `json:"task"`
			Events   int    `json:"events"`
			Appended int    `json:"appended"`
		}
		rows := make([]row, len(all))
		for i, t := range all {
			rows[i] = row{t.Task.String(), t.Events, t.Appended}
		}
		if err := printJSON(stdout, rows); err != nil {
			return fail(stderr, err)
		}
	}
	return exitOK
}

func cmdExport(args []string, stdout, stderr io.Writer) int {
	f := newFlags("export", "TASK", stderr)
	out := f.String("o", "", "write to this file instead of standard output")
	pos, code := f.parseOrExit(args, 1, 1)
	if code >= 0 {
		return code
	}
	db, task, err := f.openTask(pos[0])
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	err = writeOutput(*out, stdout, func(w io.Writer) error {
		return session.Export(context.Background(), db, task, w)
	})
	if err != nil {
		return fail(stderr, err)
	}
	return exitOK
}

func cmdTasks(args []string, stdout, stderr io.Writer) int {
	f := newFlags("tasks", "", stderr).withJSON()
	if _, code := f.parseOrExit(args, 0, 0); code >= 0 {
		return code
	}
	db, err := f.openReadOnly()
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	tasks, err := db.Tasks()
	if err != nil {
		return fail(stderr, err)
	}
	if f.json {
		type row struct {
			Task     string `json:"task"`
			Events   uint64 `json:"events"`
			LastTurn int    `json:"last_turn"`
		}
		rows := make([]row, len(tasks))
		for i, t := range tasks {
			rows[i] = row{t.Task.String(), t.Events, t.LastTurn}
		}
		if err := printJSON(stdout, rows); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "%-36s  %7s  %5s\n", "TASK", "EVENTS", "TURNS")
	for _, t := range tasks {
		fmt.Fprintf(stdout, "%-36s  %7d  %5d\n", t.Task, t.Events, t.LastTurn)
	}
	return exitOK
}

func cmdLog(args []string, stdout, stderr io.Writer) int {
	f := newFlags("log", "TASK", stderr).withJSON()
	from := f.Uint64("from", 1, "first sequence number to print")
	pos, code := f.parseOrExit(args, 1, 1)
	if code >= 0 {
		return code
	}
	db, task, err := f.openTask(pos[0])
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if !f.json {
		fmt.Fprintf(w, "%4s %6s  %-16s %s\n", "TURN", "SEQ", "TYPE", "SUMMARY")
	}
	for ev, err := range db.Events(context.Background(), task, *from) {
		if err != nil {
			w.Flush()
			return fail(stderr, err)
		}
		if f.json {
			line, err := events.MarshalJSONLine(ev)
			if err != nil {
				return fail(stderr, err)
			}
			w.Write(append(line, '\n'))
			continue
		}
		fmt.Fprintf(w, "%4d %6d  %-16s %s\n", ev.Turn, ev.Seq, ev.Type, events.Summary(ev))
	}
	return exitOK
}
