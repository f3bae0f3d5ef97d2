package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

func cmdExport(args []string, stdout, stderr io.Writer) int {
	f := newFlags("export", "TASK", stderr)
	out := f.String("o", "", "write to this file instead of standard output")
	sign := f.String("sign", "", "sign the export with this Ed25519 private key file (ssh-keygen -t ed25519 -N '' writes one); import --verify-key KEY.pub checks it")
	pos, code := f.parseOrExit(args, 1, 1)
	if code >= 0 {
		return code
	}
	var key ed25519.PrivateKey
	if *sign != "" {
		var err error
		if key, err = readSigningKey(*sign); err != nil {
			return fail(stderr, err)
		}
	}
	db, task, err := f.openTask(pos[0])
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	err = writeOutput(*out, stdout, func(w io.Writer) error {
		if key != nil {
			return session.ExportSigned(context.Background(), db, task, w, key)
		}
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
	type row struct {
		Task     string `json:"task"`
		Events   uint64 `json:"events"`
		LastTurn int    `json:"last_turn"`
		Runtime  string `json:"runtime"`
		Title    string `json:"title"`
	}
	rows := make([]row, len(tasks))
	for i, t := range tasks {
		runtime, title, err := taskHeadline(context.Background(), db, t.Task)
		if err != nil {
			return fail(stderr, err)
		}
		rows[i] = row{t.Task.String(), t.Events, t.LastTurn, runtime, title}
	}
	if f.json {
		if err := printJSON(stdout, rows); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	if len(rows) == 0 {
		fmt.Fprintf(stdout, "no tasks in %s\n", f.db)
		return exitOK
	}
	w := safeWriter{stdout}
	fmt.Fprintf(w, "%-36s  %7s  %5s  %-16s  %s\n", "TASK", "EVENTS", "TURNS", "RUNTIME", "TITLE")
	for _, r := range rows {
		fmt.Fprintf(w, "%-36s  %7d  %5d  %-16s  %s\n", r.Task, r.Events, r.LastTurn, cut(r.Runtime, 16), r.Title)
	}
	return exitOK
}

// titleRunes is how much of the first user message a task's title keeps.
const titleRunes = 60

// taskHeadline reads a task's log up to its first user message: the runtime task_started
// recorded ("" for none) and that message, on one line and cut, as the task's title.
func taskHeadline(ctx context.Context, db store.Store, task uuid.UUID) (runtime, title string, err error) {
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return "", "", err
		}
		switch ev.Type {
		case events.TypeTaskStarted:
			if p, err := ev.Payload(); err == nil {
				rt := p.(*events.TaskStarted).Runtime
				runtime = strings.TrimSpace(rt.Name + " " + rt.Version)
			}
		case events.TypeUserMessage:
			if p, err := ev.Payload(); err == nil {
				return runtime, cut(strings.Join(strings.Fields(p.(*events.UserMessage).Text), " "), titleRunes), nil
			}
		}
	}
	return runtime, "", nil
}

// cut shortens s to max runes, the last one an ellipsis when it was longer.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
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
	var decisions map[uint64]string
	if !f.json {
		if decisions, err = decisionSummaries(context.Background(), db, task); err != nil {
			return fail(stderr, err)
		}
	}
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	w := io.Writer(safeWriter{bw})
	if !f.json {
		fmt.Fprintf(w, "%4s %6s  %-16s %s\n", "TURN", "SEQ", "TYPE", "SUMMARY")
	}
	for ev, err := range db.Events(context.Background(), task, *from) {
		if err != nil {
			bw.Flush()
			return fail(stderr, err)
		}
		if f.json {
			line, err := events.MarshalJSONLine(ev)
			if err != nil {
				return fail(stderr, err)
			}
			bw.Write(append(line, '\n'))
			continue
		}
		fmt.Fprintf(w, "%4d %6d  %-16s %s\n", ev.Turn, ev.Seq, ev.Type, eventSummary(ev, decisions))
	}
	return exitOK
}
