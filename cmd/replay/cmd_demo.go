package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/location"
)

// The fixture layout the demo reads (and the tests share):
//
//	testdata/sessions/NAME.jsonl              a script of events with turn lines
//	testdata/workspaces/NAME/ROOT/            the files of each root, ROOT the base name of the
//	                                          root the script records ("/ws" → ws)
//	testdata/workspaces/NAME/home/            optional global rules
//	testdata/workspaces/NAME/remote-rules.json optional remote rules
//
// The demo writes tasklog-demo.db, not $TASKLOG_DB: it replaces its database on every run, and
// $TASKLOG_DB names where a user's own tasks live. An existing --db file is replaced only when it
// is a previous demo's database (a tasklog database holding no task but the demo's).
//
// With --store nats://HOST:PORT[/STREAM] it records into that stream, TASKLOG_DEMO when the URL
// names none ($TASKLOG_STORE is not used either: the hooks' stream is the user's). Nothing can
// be removed from a stream, so a stream holding a task the demo did not record is refused, and
// a session an earlier demo recorded there is verified and replayed again, not recorded twice.
func cmdDemo(args []string, stdout, stderr io.Writer) int {
	f := newFlags("demo", "", stderr)
	f.db = "tasklog-demo.db"
	f.noStoreEnv = true
	f.Lookup("db").DefValue = f.db
	f.Lookup("db").Usage = "the demo's database, created or replaced (a file that is not a previous demo's is refused); $TASKLOG_DB is not used"
	f.Lookup("store").Usage = "record into a stream of a NATS JetStream server, nats://HOST:PORT[/STREAM] (default stream " + demoStream + "), instead of --db; $TASKLOG_STORE is not used"
	dataDir := f.String("testdata", "testdata", "folder holding sessions/ and workspaces/")
	show := f.String("show", "monorepo", "the session whose timeline is explained")
	if _, code := f.parseOrExit(args, 0, 0); code >= 0 {
		return code
	}
	f.loc = f.loc.WithDefaultStream(demoStream)
	f.db = f.loc.String()
	scripts, err := filepath.Glob(filepath.Join(*dataDir, "sessions", "*.jsonl"))
	if err != nil || len(scripts) == 0 {
		return fail(stderr, fmt.Errorf("no sessions under %s/sessions (run the demo from the repository root)", *dataDir))
	}
	sort.Strings(scripts)
	if !f.loc.Shared() {
		if err := removePreviousDemo(f, scripts); err != nil {
			return fail(stderr, err)
		}
	}
	db, err := f.loc.Open(location.Options{Wait: f.natsTimeout(), CallTimeout: f.natsTimeout()})
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	if f.loc.Shared() {
		if err := checkDemoTasks(db, f.db, scripts); err != nil {
			return fail(stderr, err)
		}
	}
	fmt.Fprintf(stdout, "tasklog demo: recording %s into %s\n\n", plural(len(scripts), "session"), f.db)
	ctx := context.Background()
	var shown uuid.UUID
	failed := false
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".jsonl")
		task, evs, n, again, err := demoSession(ctx, db, *dataDir, script, name)
		if err != nil {
			return fail(stderr, err)
		}
		verdict := "verified"
		if err := db.Verify(ctx, task); err != nil {
			verdict, failed = "CHAIN BROKEN: "+err.Error(), true
		} else if rep, err := session.Replay(ctx, db, task, session.ReplayOptions{}); err != nil {
			verdict, failed = "REPLAY FAILED: "+err.Error(), true
		} else if !rep.OK() {
			verdict, failed = "DIFFERS: "+rep.Changes[0].String(), true
		} else if again {
			verdict += " (recorded by an earlier demo)"
		}
		fmt.Fprintf(stdout, "  %-16s %s  %10s  %12s  %s\n", name, task, plural(int(evs), "event"), plural(n, "decision"), verdict)
		if name == *show {
			shown = task
		}
	}
	if shown != uuid.Nil {
		fmt.Fprintf(stdout, "\nTimeline of %q, explained:\n\n", *show)
		if err := printTimeline(ctx, safeWriter{stdout}, db, shown); err != nil {
			return fail(stderr, err)
		}
	}
	fmt.Fprintf(stdout, "\nExplore it: go run ./cmd/replay tasks %s %s\n", location.FlagFor(f.db), f.db)
	if failed {
		return exitFailed
	}
	return exitOK
}

// demoStream is the stream the demo records into on a NATS server when the URL names none.
const demoStream = "TASKLOG_DEMO"

// demoSession records a fixture session and returns its task, events and decisions. A session
// already in the store (an earlier demo's, in a NATS stream) is not recorded again: again is set
// and its events and decisions are counted.
func demoSession(ctx context.Context, db store.Store, dataDir, script, name string) (task uuid.UUID, evs uint64, decisions int, again bool, err error) {
	if id, err := scriptTask(script); err == nil {
		if h, err := db.Head(id); err == nil {
			ds, err := session.Decisions(ctx, db, id)
			return id, h.Seq, len(ds), true, err
		} else if !errors.Is(err, store.ErrTaskNotFound) {
			return uuid.Nil, 0, 0, false, err
		}
	}
	s, n, err := recordScript(db, script, fixtureWorkspace(dataDir, name), nil)
	if err != nil {
		return uuid.Nil, 0, 0, false, err
	}
	return s.Task(), s.Version(), n, false, nil
}

// demoTasks are the tasks of the demo's scripts.
func demoTasks(scripts []string) map[uuid.UUID]bool {
	demo := map[uuid.UUID]bool{}
	for _, s := range scripts {
		if id, err := scriptTask(s); err == nil {
			demo[id] = true
		}
	}
	return demo
}

// checkDemoTasks refuses a store that holds a task the demo did not record.
func checkDemoTasks(db store.Store, name string, scripts []string) error {
	tasks, err := db.Tasks()
	if err != nil {
		return err
	}
	demo := demoTasks(scripts)
	for _, t := range tasks {
		if !demo[t.Task] {
			return fmt.Errorf("%s holds task %s, which the demo did not record; the demo records only into "+
				"its own stream: name another (nats://HOST:PORT/STREAM)", name, t.Task)
		}
	}
	return nil
}

// removePreviousDemo removes the file at --db when it is a previous demo's database: a tasklog
// database whose tasks are all tasks of the demo's scripts. Any other file is refused.
func removePreviousDemo(f *flags, scripts []string) error {
	if _, err := os.Stat(f.db); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	refuse := func(why string) error {
		return fmt.Errorf("%s already exists and %s; the demo replaces only its own database: "+
			"give another --db, or remove the file yourself", f.db, why)
	}
	demo := demoTasks(scripts)
	db, err := location.File(f.db).Open(location.Options{Wait: f.timeout, ReadOnly: true})
	if errors.Is(err, store.ErrNotDatabase) {
		return refuse("is not a tasklog database")
	} else if err != nil {
		return err
	}
	tasks, err := db.Tasks()
	db.Close()
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if !demo[t.Task] {
			return refuse(fmt.Sprintf("holds task %s, which the demo did not record", t.Task))
		}
	}
	return os.Remove(f.db)
}

// scriptTask is the task id on the first line of a fixture script.
func scriptTask(name string) (uuid.UUID, error) {
	in, err := os.Open(name)
	if err != nil {
		return uuid.Nil, err
	}
	defer in.Close()
	line, err := bufio.NewReader(in).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return uuid.Nil, err
	}
	var head struct {
		Task uuid.UUID `json:"task"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return uuid.Nil, fmt.Errorf("%s:1: %w", name, err)
	}
	return head.Task, nil
}

// fixtureWorkspace maps a fixture's roots onto testdata/workspaces/NAME/ROOT.
func fixtureWorkspace(dataDir, name string) *workspaceFlags {
	dir := filepath.Join(dataDir, "workspaces", name)
	wf := &workspaceFlags{}
	if st, err := os.Stat(filepath.Join(dir, "home")); err == nil && st.IsDir() {
		wf.Home = filepath.Join(dir, "home")
	}
	if _, err := os.Stat(filepath.Join(dir, "remote-rules.json")); err == nil {
		wf.Remote = filepath.Join(dir, "remote-rules.json")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() && e.Name() != "home" {
			wf.Roots = append(wf.Roots, "/"+e.Name()+"="+filepath.Join(dir, e.Name()))
		}
	}
	return wf
}

// printTimeline shows, request by request, what entered the context and which rules it brought in.
func printTimeline(ctx context.Context, w io.Writer, db store.Store, task uuid.UUID) error {
	ds, err := session.Decisions(ctx, db, task)
	if err != nil {
		return err
	}
	for _, rec := range ds {
		d := rec.Decision
		var in []string
		for _, o := range d.Included {
			in = append(in, o.Name)
		}
		fmt.Fprintf(w, "%s (turn %d): %s; the prompt includes: %s\n", rec.Position, d.Turn, plural(len(d.Context), "candidate path"), strings.Join(in, ", "))
		for _, o := range d.Included {
			for _, m := range o.Matches {
				if m.Pattern == "" {
					continue
				}
				src := ""
				if srcs := events.SourcesOf(d.Context, m.Root, m.Path); len(srcs) > 0 {
					src = ", from " + rec.Requests.Source(srcs[len(srcs)-1])
				}
				fmt.Fprintf(w, "    + %-14s %s matched %s%s\n", o.Name, m.Pattern, m.Path, src)
				break
			}
		}
	}
	return nil
}
