package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

func cmdRecord(args []string, stdout, stderr io.Writer) int {
	f := newFlags("record", "SCRIPT.jsonl --workspace DIR", stderr).withJSON()
	var wf workspaceFlags
	wf.register(f)
	pos, code := f.parseOrExit(args, 1, 1)
	if code >= 0 {
		return code
	}
	// A script that cannot be read leaves no database behind.
	if _, err := os.Stat(pos[0]); err != nil {
		return fail(stderr, err)
	}
	db, err := f.open()
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	s, decisions, err := recordScript(db.Store, pos[0], &wf, nil)
	if err != nil {
		return fail(stderr, err)
	}
	if f.json {
		err = printJSON(stdout, map[string]any{"task": s.Task().String(), "events": s.Version(), "decisions": decisions})
		if err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	fmt.Fprintln(stdout, s.Task())
	return exitOK
}

// recordScript runs one script against the folders the flags name and returns the session and
// the number of decisions made. ids makes the event ids; nil means random ones.
func recordScript(db store.Store, name string, wf *workspaceFlags, ids *events.IDSource) (*session.Session, int, error) {
	in, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	defer in.Close()
	home, err := wf.homeFS()
	if err != nil {
		return nil, 0, err
	}
	remote, err := wf.remoteRules()
	if err != nil {
		return nil, 0, err
	}
	var defaults []string
	if wf.workspace != "" {
		abs, err := absDir(wf.workspace)
		if err != nil {
			return nil, 0, err
		}
		defaults = []string{abs}
	}
	decisions := 0
	s, err := session.RunScript(context.Background(), db, bufio.NewReader(in), name, session.ScriptOptions{
		Roots:        wf.sessionRoots,
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
