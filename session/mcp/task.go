package mcp

import (
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// Sentinel errors of the server's task lookup, which callers test with errors.Is.
var (
	// ErrNoLog: the log does not exist yet.
	ErrNoLog = errors.New("no task log")
	// ErrNoTask: the call names no task and the server has no current one.
	ErrNoTask = errors.New("no current task")
	// ErrUnknownTask: the task named (or the agent session's) has no log in the database.
	ErrUnknownTask = errors.New("no such task")
)

// withDB opens the log read-only for one call and closes it after: bbolt lets one process at a
// time hold the file for writing, and the hooks of the same agent write between calls.
func (s *server) withDB(fn func(db store.Store) error) error {
	db, err := s.cfg.Open()
	if errors.Is(err, ErrNoLog) {
		return fmt.Errorf("%w at %s yet (the agent's hooks, 'replay record' or 'replay import' create it)", ErrNoLog, s.cfg.Store)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// taskFor resolves the task a call is about: the one it names, else --task, else the task the
// hooks write for this agent session.
func (s *server) taskFor(db store.Store, named string) (uuid.UUID, error) {
	arg, from := named, "the call"
	switch {
	case arg != "":
	case s.cfg.Task != "":
		arg, from = s.cfg.Task, "--task"
	case s.cfg.Session != "":
		id := sessionTask(s.cfg.Agent, s.cfg.Session)
		if _, ok, err := taskInfo(db, id); err != nil {
			return uuid.Nil, err
		} else if !ok {
			return uuid.Nil, fmt.Errorf("%w: the task of %s session %s (%s) has no log in %s yet; the tasks are: %s",
				ErrUnknownTask, s.cfg.Agent, s.cfg.Session, id, db.Path(), taskList(db))
		}
		return id, nil
	default:
		return uuid.Nil, fmt.Errorf("%w: name one (task), start the server with --task, or from an agent session; the tasks are: %s",
			ErrNoTask, taskList(db))
	}
	listing := ""
	if s.cfg.ListTasks != nil {
		listing = s.cfg.ListTasks(db.Path())
	}
	id, err := session.ResolveTask(db, arg, listing)
	if err != nil {
		return uuid.Nil, fmt.Errorf("%s names task %q: %w; the tasks are: %s", from, arg, err, taskList(db))
	}
	if _, ok, err := taskInfo(db, id); err != nil {
		return uuid.Nil, err
	} else if !ok {
		return uuid.Nil, fmt.Errorf("%s names task %s: %w in %s; the tasks are: %s", from, id, ErrUnknownTask, db.Path(), taskList(db))
	}
	return id, nil
}

// taskInfo finds a task of the database.
func taskInfo(db store.Store, id uuid.UUID) (store.TaskInfo, bool, error) {
	tasks, err := db.Tasks()
	if err != nil {
		return store.TaskInfo{}, false, err
	}
	for _, t := range tasks {
		if t.Task == id {
			return t, true, nil
		}
	}
	return store.TaskInfo{}, false, nil
}

// taskList names the tasks of the database, at most namesShown of them.
func taskList(db store.Store) string {
	tasks, err := db.Tasks()
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	names := make([]string, len(tasks))
	for i, t := range tasks {
		names[i] = fmt.Sprintf("%s (%d events, turn %d)", t.Task, t.Events, t.LastTurn)
	}
	return bounded(names, namesShown)
}

// sessionTask is the task the hooks of an agent session write to.
func sessionTask(agent, session string) uuid.UUID {
	return agentlog.TaskID(agentlog.Agent(agent), session)
}
