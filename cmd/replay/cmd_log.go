package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// blank reports whether in holds nothing but white space, and returns a reader of all of in
// (the white space it read is put back, so line numbers in errors stay right).
func blank(in io.Reader) (io.Reader, bool) {
	r := bufio.NewReader(in)
	var lead []byte
	for {
		b, err := r.ReadByte()
		if err != nil {
			return nil, true
		}
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			r.UnreadByte()
			return io.MultiReader(bytes.NewReader(lead), r), false
		}
		lead = append(lead, b)
	}
}

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
	// Every file is opened, and an empty one said so, before the database is: a name that does
	// not exist leaves no database behind.
	inputs := make([]*os.File, 0, len(files))
	defer func() {
		for _, in := range inputs {
			in.Close()
		}
	}()
	for _, name := range files {
		in, err := os.Open(name)
		if err != nil {
			return fail(stderr, err)
		}
		inputs = append(inputs, in)
	}
	var db *writeDB
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	var all []session.Imported
	for i, name := range files {
		r, empty := blank(inputs[i])
		if empty {
			fmt.Fprintf(stderr, "replay import: %s holds no events: nothing imported from it\n", name)
			continue
		}
		if db == nil {
			var err error
			if db, err = f.open(); err != nil {
				return fail(stderr, err)
			}
		}
		got, err := session.Import(context.Background(), db.Store, r, name, session.ImportOptions{Now: time.Now})
		if err != nil {
			return fail(stderr, err)
		}
		all = append(all, got...)
		if !f.json {
			for _, t := range got {
				fmt.Fprintf(stdout, "%s\t%s\t%s, %d new\n", name, t.Task, plural(t.Events, "event"), t.Appended)
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
		fmt.Fprintf(w, "%6s %3s %4s %6s  %-16s %s\n", "PROMPT", "REQ", "TURN", "SEQ", "TYPE", "SUMMARY")
	}
	// Numbering needs the log from its start; with --from the events before are folded unprinted.
	var reqs session.Requests
	if !f.json && *from > 1 {
		for ev, err := range db.Events(context.Background(), task, 1) {
			if err != nil {
				return fail(stderr, err)
			}
			if ev.Seq >= *from {
				break
			}
			reqs.Add(ev)
		}
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
		at := reqs.Add(ev)
		fmt.Fprintf(w, "%6d %3d %4d %6d  %-16s %s\n", at.Prompt, at.Request, ev.Turn, ev.Seq, ev.Type, eventSummary(ev, decisions))
	}
	return exitOK
}
