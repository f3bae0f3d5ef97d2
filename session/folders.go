package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// Folders say where the rule files of a task are read from on this machine, which need not be
// where the task ran: the folder of its first recorded root, a folder for each other root, the
// home folder of global rules and a file of remote rules. The zero value reads no folder. Errors
// name the folders by the command-line flags that set them (--workspace, --root, --home,
// --remote-rules), which is where a person fixes them.
type Folders struct {
	// Workspace is the folder of the first recorded root; without a task, the folder read,
	// named by its absolute path.
	Workspace string
	// Roots are ROOT=DIR pairs: the files of the root recorded as ROOT are read from DIR.
	Roots []string
	// Home is the home folder of global rules (~/Documents/Cline/Rules, …).
	Home string
	// Remote is a JSON file of remote rules: [{"name", "contents", "alwaysEnabled"}].
	Remote string
}

// Dirs maps each recorded root to the folder its files are read from.
func (w *Folders) Dirs(recorded []string) (map[string]string, error) {
	m := map[string]string{}
	if w.Workspace != "" {
		if len(recorded) == 0 {
			return nil, fmt.Errorf("--workspace: the task records no workspace root")
		}
		m[recorded[0]] = w.Workspace
	}
	for _, r := range w.Roots {
		root, dir, ok := strings.Cut(r, "=")
		if !ok || root == "" || dir == "" {
			return nil, fmt.Errorf("--root %q: want ROOT=DIR", r)
		}
		found := false
		for _, rec := range recorded {
			found = found || rec == root
		}
		if !found {
			return nil, fmt.Errorf("--root %q: the task records no root %q (it has %s)", r, root, strings.Join(recorded, ", "))
		}
		m[root] = dir
	}
	for _, root := range recorded {
		dir, ok := m[root]
		if !ok {
			continue
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("workspace for %s: %q is not a folder", root, dir)
		}
	}
	return m, nil
}

// HomeFS reads the home folder; nil when there is none.
func (w *Folders) HomeFS() (fs.FS, error) {
	if w.Home == "" {
		return nil, nil
	}
	if st, err := os.Stat(w.Home); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--home %q is not a folder", w.Home)
	}
	return os.DirFS(w.Home), nil
}

// RemoteRules reads the file of remote rules; nil when there is none.
func (w *Folders) RemoteRules() ([]rules.RemoteRule, error) {
	if w.Remote == "" {
		return nil, nil
	}
	b, err := os.ReadFile(w.Remote)
	if err != nil {
		return nil, err
	}
	var rr []rules.RemoteRule
	if err := json.Unmarshal(b, &rr); err != nil {
		return nil, fmt.Errorf("--remote-rules %s: %w", w.Remote, err)
	}
	return rr, nil
}

// SessionRoots gives a session's roots: the recorded roots, each with the folder mapped to it.
func (w *Folders) SessionRoots(recorded []string) ([]Root, error) {
	dirs, err := w.Dirs(recorded)
	if err != nil {
		return nil, err
	}
	out := make([]Root, len(recorded))
	for i, r := range recorded {
		out[i] = Root{Path: r}
		if d, ok := dirs[r]; ok {
			out[i].FS, out[i].Dir = os.DirFS(d), d
		}
	}
	return out, nil
}

// RulesWorkspace is the rule engine's view of the folders of the recorded roots.
func (w *Folders) RulesWorkspace(recorded []string) (rules.Workspace, error) {
	roots, err := w.SessionRoots(recorded)
	if err != nil {
		return rules.Workspace{}, err
	}
	ws := rules.Workspace{}
	for _, r := range roots {
		if r.FS != nil {
			ws.Roots = append(ws.Roots, rules.Root{Name: r.Path, FS: r.FS})
		}
	}
	if ws.Home, err = w.HomeFS(); err != nil {
		return ws, err
	}
	ws.Remote, err = w.RemoteRules()
	return ws, err
}

// Unrecorded is the workspace read when no task says which roots it recorded: Workspace named
// by its absolute path, and each ROOT=DIR of Roots named ROOT.
func (w *Folders) Unrecorded() (rules.Workspace, error) {
	var ws rules.Workspace
	if w.Workspace != "" {
		ws.Roots = append(ws.Roots, rules.Root{Name: filepath.ToSlash(w.Workspace), FS: os.DirFS(w.Workspace), Dir: w.Workspace})
	}
	for _, r := range w.Roots {
		root, dir, ok := strings.Cut(r, "=")
		if !ok || root == "" || dir == "" {
			return ws, fmt.Errorf("--root %q: want ROOT=DIR", r)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return ws, fmt.Errorf("--root %q: %q is not a folder", r, dir)
		}
		ws.Roots = append(ws.Roots, rules.Root{Name: root, FS: os.DirFS(dir)})
	}
	var err error
	if ws.Home, err = w.HomeFS(); err != nil {
		return ws, err
	}
	ws.Remote, err = w.RemoteRules()
	return ws, err
}

// RulesWorkspaceOf is the rule engine's view of the folders: under the roots a task recorded,
// or without a task (recorded empty) under the names Unrecorded gives.
func (w *Folders) RulesWorkspaceOf(recorded []string) (rules.Workspace, error) {
	if len(recorded) == 0 {
		return w.Unrecorded()
	}
	return w.RulesWorkspace(recorded)
}

// RootDirs pairs each root name the workspace uses with the absolute, slash-separated folder it
// is read from, the longest folder first so that a nested root owns its files.
func (w *Folders) RootDirs(recorded []string) [][2]string {
	var out [][2]string
	if len(recorded) > 0 {
		dirs, _ := w.Dirs(recorded)
		for _, r := range recorded {
			if d, ok := dirs[r]; ok {
				abs, _ := filepath.Abs(d)
				out = append(out, [2]string{r, filepath.ToSlash(abs)})
			}
		}
	} else {
		if w.Workspace != "" {
			out = append(out, [2]string{filepath.ToSlash(w.Workspace), filepath.ToSlash(w.Workspace)})
		}
		for _, r := range w.Roots {
			if root, dir, ok := strings.Cut(r, "="); ok {
				abs, _ := filepath.Abs(dir)
				out = append(out, [2]string{root, filepath.ToSlash(abs)})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b [2]string) int { return len(b[1]) - len(a[1]) })
	return out
}

// AuditRoots are the folders whose files an audit's never_applicable check lists: those the
// folders name, else each recorded root that is a folder on this machine. With lenient, folders
// that do not fit the task's roots (an MCP server's workspace, another task's) fall back to the
// latter.
func (w *Folders) AuditRoots(ctx context.Context, db store.Store, task uuid.UUID, lenient bool) ([]Root, error) {
	recorded, err := RecordedRoots(ctx, db, task)
	if err != nil {
		return nil, err
	}
	if w.Workspace != "" || len(w.Roots) > 0 {
		roots, err := w.SessionRoots(recorded)
		if err == nil || !lenient {
			return roots, err
		}
	}
	var out []Root
	for _, r := range recorded {
		if st, err := os.Stat(r); err == nil && st.IsDir() {
			out = append(out, Root{Path: r, FS: os.DirFS(r)})
		}
	}
	return out, nil
}

// RecordedRoots reads the workspace roots of a task's task_started event.
func RecordedRoots(ctx context.Context, db store.Store, task uuid.UUID) ([]string, error) {
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return nil, err
		}
		p, err := ev.Payload()
		if err != nil {
			return nil, err
		}
		if ts, ok := p.(*events.TaskStarted); ok {
			return ts.Roots, nil
		}
		break
	}
	return nil, fmt.Errorf("task %s: the log does not start with task_started", task)
}
