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

func cmdImport(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "--from" || a == "-from" || len(a) > 7 && (a[:7] == "--from=" || a[:6] == "-from=") {
			return cmdImportAgent(args, stdout, stderr)
		}
	}
	f := newFlags("import", "FILE.jsonl...", stderr).withJSON()
	files, code := f.parseOrExit(args, 1, -1)
	if code >= 0 {
		return code
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
