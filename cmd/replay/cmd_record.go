package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

func cmdRecord(args []string, stdout, stderr io.Writer) int {
	f := newFlags("record", "SCRIPT.jsonl [--workspace DIR] [--root ROOT=DIR]…", stderr).withJSON()
	var wf workspaceFlags
	wf.register(f)
	pos, code := f.parseOrExit(args, 1, 1)
	if code >= 0 {
		return code
	}
	// A script that cannot be read, or holds nothing, leaves no database behind.
	in, err := os.Open(pos[0])
	if err != nil {
		return fail(stderr, err)
	}
	_, empty, err := blank(in)
	in.Close()
	if err != nil {
		return fail(stderr, fmt.Errorf("%s: %w", pos[0], err))
	}
	if empty {
		fmt.Fprintf(safeWriter{stderr}, "replay record: %s is empty: a script holds one event per line, "+
			"a task_started first and {\"type\":\"turn\"} where a prompt is built; nothing recorded\n", pos[0])
		return exitUsage
	}
	if wf.Workspace == "" && len(wf.Roots) == 0 && wf.Home == "" && wf.Remote == "" {
		fmt.Fprintln(safeWriter{stderr}, "replay record: no --workspace, --root, --home or --remote-rules: no rule file is read, "+
			"so every decision holds no rule")
	}
	rec, err := recordWhole(f, pos[0], &wf)
	if err != nil {
		return fail(stderr, err)
	}
	if f.json {
		err = printJSON(stdout, map[string]any{"task": rec.task.String(), "events": rec.events, "decisions": rec.decisions})
		if err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	fmt.Fprintln(stdout, rec.task)
	return exitOK
}

// recorded is what recordWhole recorded.
type recorded struct {
	task      uuid.UUID
	events    uint64
	decisions int
}

// recordWhole runs the script into a scratch database in the temporary folder and, only once
// every line has run, copies the task into the store the flags select: a script refused at any
// line writes nothing there (and creates no database).
func recordWhole(f *flags, name string, wf *workspaceFlags) (recorded, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "tasklog-record-")
	if err != nil {
		return recorded{}, fmt.Errorf("scratch folder: %w", err)
	}
	defer os.RemoveAll(dir)
	scratch, err := store.Open(filepath.Join(dir, "script.db"), &store.Options{NoSync: true})
	if err != nil {
		return recorded{}, fmt.Errorf("scratch database: %w", err)
	}
	defer scratch.Close()
	s, decisions, err := recordScript(scratch, name, wf, nil)
	if err != nil {
		return recorded{}, err
	}
	rec := recorded{task: s.Task(), events: s.Version(), decisions: decisions}
	log, err := os.Create(filepath.Join(dir, "script.jsonl"))
	if err != nil {
		return rec, fmt.Errorf("scratch log: %w", err)
	}
	defer log.Close()
	bw := bufio.NewWriter(log)
	if err := session.Export(ctx, scratch, rec.task, bw); err != nil {
		return rec, err
	}
	if err := bw.Flush(); err != nil {
		return rec, fmt.Errorf("scratch log: %w", err)
	}
	if _, err := log.Seek(0, io.SeekStart); err != nil {
		return rec, fmt.Errorf("scratch log: %w", err)
	}
	db, err := f.open()
	if err != nil {
		return rec, err
	}
	if h, herr := db.Head(rec.task); herr == nil {
		err = fmt.Errorf("%s: task %s already has %d events in %s; a script records a new task", name, rec.task, h.Seq, f.db)
	} else if !errors.Is(herr, store.ErrTaskNotFound) {
		err = herr
	} else {
		_, err = session.Import(ctx, db.Store, log, name, session.ImportOptions{})
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return rec, err
}

// recordScript runs one script against the folders the flags name and returns the session and
// the number of decisions made. ids makes the event ids; nil means random ones.
func recordScript(db store.Store, name string, wf *workspaceFlags, ids *events.IDSource) (*session.Session, int, error) {
	in, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	defer in.Close()
	home, err := wf.HomeFS()
	if err != nil {
		return nil, 0, err
	}
	remote, err := wf.RemoteRules()
	if err != nil {
		return nil, 0, err
	}
	var defaults []string
	if wf.Workspace != "" {
		abs, err := absDir(wf.Workspace)
		if err != nil {
			return nil, 0, err
		}
		defaults = []string{abs}
	}
	decisions := 0
	s, err := session.RunScript(context.Background(), db, bufio.NewReader(in), name, session.ScriptOptions{
		Roots:        wf.SessionRoots,
		DefaultRoots: defaults,
		Home:         home,
		Remote:       remote,
		IDs:          ids,
		OnDecision:   func(*session.Decision) { decisions++ },
	})
	if s != nil {
		s.Close() // the script is over: stop watching its folders
	}
	return s, decisions, err
}
