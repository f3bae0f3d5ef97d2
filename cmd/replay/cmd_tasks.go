package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// cmdTasks lists the tasks of the folder it runs in: those whose recorded workspace root (or,
// for a task that records none, working directory) is that folder or holds it. Where no task
// ran in the folder, and with --all, it lists every task. --machine, --user and --agent keep
// the tasks recorded on that machine, by that user, with that agent, of every folder.
func cmdTasks(args []string, stdout, stderr io.Writer) int {
	f := newFlags("tasks", "", stderr).withJSON()
	all := f.Bool("all", false, "list the tasks of every folder, not only of the one replay runs in")
	machine := f.String("machine", "", "list only the tasks recorded on this machine (of every folder)")
	user := f.String("user", "", "list only the tasks of this user (of every folder)")
	agent := f.String("agent", "", "list only the tasks of this agent, e.g. claude-code (of every folder)")
	if _, code := f.parseOrExit(args, 0, 0); code >= 0 {
		return code
	}
	filtered := *machine != "" || *user != "" || *agent != ""
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
		Task     string   `json:"task"`
		Events   uint64   `json:"events"`
		LastTurn int      `json:"last_turn"`
		Runtime  string   `json:"runtime"`
		Agent    string   `json:"agent"`
		Machine  string   `json:"machine"`
		User     string   `json:"user"`
		Title    string   `json:"title"`
		Roots    []string `json:"roots"`
	}
	var rows, here []row
	cwd := workingDirs()
	for _, t := range tasks {
		h, err := taskHeadline(context.Background(), db, t.Task)
		if err != nil {
			return fail(stderr, err)
		}
		if filtered && (*machine != "" && h.machine != *machine || *user != "" && h.user != *user || *agent != "" && h.agent != *agent) {
			continue
		}
		r := row{t.Task.String(), t.Events, t.LastTurn, h.runtime, h.agent, h.machine, h.user, h.title, h.roots}
		if r.Roots == nil {
			r.Roots = []string{}
		}
		rows = append(rows, r)
		if h.ranIn(cwd) {
			here = append(here, r)
		}
	}
	switch {
	case *all || filtered || len(rows) == 0:
	case len(here) == 0:
		fmt.Fprintf(safeWriter{stderr}, "replay tasks: none ran in %s, so the tasks of every folder are listed\n", cwd[0])
	default:
		if others := len(rows) - len(here); others > 0 {
			fmt.Fprintf(safeWriter{stderr}, "replay tasks: %s of other folders not listed (--all lists them)\n",
				plural(others, "task"))
		}
		rows = here
	}
	if f.json {
		if rows == nil {
			rows = []row{}
		}
		if err := printJSON(stdout, rows); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	if len(rows) == 0 && filtered {
		fmt.Fprintf(stdout, "no tasks in %s match\n", f.db)
		return exitOK
	}
	if len(rows) == 0 {
		fmt.Fprintf(stdout, "no tasks in %s\n", f.db)
		return exitOK
	}
	w := safeWriter{stdout}
	fmt.Fprintf(w, "%-36s  %7s  %5s  %-16s  %-16s  %-12s  %s\n", "TASK", "EVENTS", "TURNS", "RUNTIME", "MACHINE", "USER", "TITLE")
	for _, r := range rows {
		fmt.Fprintf(w, "%-36s  %7d  %5d  %-16s  %-16s  %-12s  %s\n", r.Task, r.Events, r.LastTurn, cut(r.Runtime, 16),
			orDefault(cut(r.Machine, 16), "-"), orDefault(cut(r.User, 12), "-"), r.Title)
	}
	return exitOK
}

// titleRunes is how much of the first user message a task's title keeps.
const titleRunes = 60

// headline is what the list of tasks shows of one.
type headline struct {
	runtime string   // the runtime task_started recorded, "" for none
	agent   string   // the runtime's name alone
	machine string   // the machine task_started recorded, "" for none
	user    string   // the user task_started recorded, "" for none
	title   string   // the first user message, on one line and cut
	roots   []string // the workspace roots task_started recorded
	cwd     string   // the working directory task_started recorded
}

// taskHeadline reads a task's log up to its first user message.
func taskHeadline(ctx context.Context, db store.Store, task uuid.UUID) (headline, error) {
	var h headline
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return h, err
		}
		switch ev.Type {
		case events.TypeTaskStarted:
			if p, err := ev.Payload(); err == nil {
				ts := p.(*events.TaskStarted)
				h.runtime = strings.TrimSpace(ts.Runtime.Name + " " + ts.Runtime.Version)
				h.roots, h.cwd = ts.Roots, ts.Cwd
				h.agent, h.machine, h.user = ts.Runtime.Name, ts.Machine, ts.User
			}
		case events.TypeUserMessage:
			if p, err := ev.Payload(); err == nil {
				h.title = cut(strings.Join(strings.Fields(p.(*events.UserMessage).Text), " "), titleRunes)
				return h, nil
			}
		}
	}
	return h, nil
}

// ranIn reports whether the task ran in one of dirs (the spellings of one folder): a recorded
// workspace root (the working directory when there is none) is that folder or holds it.
func (h headline) ranIn(dirs []string) bool {
	places := h.roots
	if len(places) == 0 && h.cwd != "" {
		places = []string{h.cwd}
	}
	for _, p := range places {
		for _, d := range dirs {
			if within(d, p) {
				return true
			}
		}
	}
	return false
}

// within reports whether the slash path dir is root or inside it.
func within(dir, root string) bool {
	root = strings.TrimSuffix(root, "/")
	return dir == root || strings.HasPrefix(dir, root+"/")
}

// workingDirs is the folder replay runs in as a slash path, and its spelling with symbolic
// links resolved when that differs (a hook records the folder the agent reports).
func workingDirs() []string {
	wd, err := os.Getwd()
	if err != nil {
		return []string{"."}
	}
	dirs := []string{filepath.ToSlash(wd)}
	if r, err := filepath.EvalSymlinks(wd); err == nil && r != wd {
		dirs = append(dirs, filepath.ToSlash(r))
	}
	return dirs
}

// taskOrLatest resolves the task a verb was given (an id or a unique prefix), or, given none,
// picks the task whose last event is the newest among those that ran in the folder replay runs
// in (the database's only task when none ran there), and says which on stderr.
func taskOrLatest(db store.Store, pos []string, verb string, stderr io.Writer) (uuid.UUID, error) {
	if len(pos) > 0 && pos[0] != "" {
		return resolveTask(db, pos[0])
	}
	tasks, err := db.Tasks()
	if err != nil {
		return uuid.Nil, err
	}
	ctx := context.Background()
	cwd := workingDirs()
	var best uuid.UUID
	var bestTime time.Time
	here := 0
	for _, t := range tasks {
		h, err := taskHeadline(ctx, db, t.Task)
		if err != nil {
			return uuid.Nil, err
		}
		if !h.ranIn(cwd) {
			continue
		}
		here++
		last, err := lastEventTime(ctx, db, t)
		if err != nil {
			return uuid.Nil, err
		}
		if here == 1 || last.After(bestTime) || (last.Equal(bestTime) && t.Task.String() > best.String()) {
			best, bestTime = t.Task, last
		}
	}
	switch {
	case here > 0:
		fmt.Fprintf(safeWriter{stderr}, "replay %s: task %s, the latest of %s that ran in %s\n", verb, best, plural(here, "task"), cwd[0])
		return best, nil
	case len(tasks) == 1:
		fmt.Fprintf(safeWriter{stderr}, "replay %s: task %s, the only one in %s\n", verb, tasks[0].Task, db.Path())
		return tasks[0].Task, nil
	case len(tasks) == 0:
		return uuid.Nil, fmt.Errorf("%s holds no task yet: run a session with the agent's hooks installed ('replay install AGENT')", db.Path())
	}
	return uuid.Nil, fmt.Errorf("no task ran in %s, and %s holds %s: name one ('%s --all' lists them)",
		cwd[0], db.Path(), plural(len(tasks), "task"), tasksCommand(db.Path()))
}

// lastEventTime is the recorded time of a task's last event.
func lastEventTime(ctx context.Context, db store.Store, t store.TaskInfo) (time.Time, error) {
	for ev, err := range db.Events(ctx, t.Task, t.Events) {
		if err != nil {
			return time.Time{}, err
		}
		return ev.Time, nil
	}
	return time.Time{}, nil
}
