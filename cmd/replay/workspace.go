package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// workspaceFlags are the flags that say where rule files are read from.
type workspaceFlags struct {
	workspace string
	roots     multiFlag
	home      string
	remote    string
}

func (w *workspaceFlags) register(f *flags) {
	f.StringVar(&w.workspace, "workspace", "", "folder holding the first workspace root's files")
	f.Var(&w.roots, "root", "ROOT=DIR: read the files of the recorded root ROOT from DIR (repeatable)")
	f.StringVar(&w.home, "home", "", "home folder for global rules (~/Documents/Cline/Rules, …)")
	f.StringVar(&w.remote, "remote-rules", "", "JSON file with remote rules: [{\"name\", \"contents\", \"alwaysEnabled\"}]")
}

// dirs maps each recorded root to the folder its files are read from.
func (w *workspaceFlags) dirs(recorded []string) (map[string]string, error) {
	m := map[string]string{}
	if w.workspace != "" {
		if len(recorded) == 0 {
			return nil, fmt.Errorf("--workspace: the task records no workspace root")
		}
		m[recorded[0]] = w.workspace
	}
	for _, r := range w.roots {
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

func (w *workspaceFlags) homeFS() (fs.FS, error) {
	if w.home == "" {
		return nil, nil
	}
	if st, err := os.Stat(w.home); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--home %q is not a folder", w.home)
	}
	return os.DirFS(w.home), nil
}

func (w *workspaceFlags) remoteRules() ([]rules.RemoteRule, error) {
	if w.remote == "" {
		return nil, nil
	}
	b, err := os.ReadFile(w.remote)
	if err != nil {
		return nil, err
	}
	var rr []rules.RemoteRule
	if err := json.Unmarshal(b, &rr); err != nil {
		return nil, fmt.Errorf("--remote-rules %s: %w", w.remote, err)
	}
	return rr, nil
}

// sessionRoots gives a session's roots: the recorded roots, each with the folder mapped to it.
func (w *workspaceFlags) sessionRoots(recorded []string) ([]session.Root, error) {
	dirs, err := w.dirs(recorded)
	if err != nil {
		return nil, err
	}
	out := make([]session.Root, len(recorded))
	for i, r := range recorded {
		out[i] = session.Root{Path: r}
		if d, ok := dirs[r]; ok {
			out[i].FS, out[i].Dir = os.DirFS(d), d
		}
	}
	return out, nil
}

// rulesWorkspace is the rule engine's view of the same folders.
func (w *workspaceFlags) rulesWorkspace(recorded []string) (rules.Workspace, error) {
	roots, err := w.sessionRoots(recorded)
	if err != nil {
		return rules.Workspace{}, err
	}
	ws := rules.Workspace{}
	for _, r := range roots {
		if r.FS != nil {
			ws.Roots = append(ws.Roots, rules.Root{Name: r.Path, FS: r.FS})
		}
	}
	if ws.Home, err = w.homeFS(); err != nil {
		return ws, err
	}
	ws.Remote, err = w.remoteRules()
	return ws, err
}

// recordedRoots reads the workspace roots of a task's task_started event.
func recordedRoots(ctx context.Context, db store.Store, task uuid.UUID) ([]string, error) {
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

func readConfig(name string) (projections.Config, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return projections.Config{}, err
	}
	cfg, err := projections.DecodeConfig(b)
	if err != nil {
		return cfg, fmt.Errorf("--config %s: %w", name, err)
	}
	return cfg, nil
}

// absDir is the absolute, slash-separated form of a folder, used as a root's recorded path
// when a script names none.
func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(abs), nil
}
