package main

import (
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

// Sentinel errors of the MCP server's task lookup.
var (
	// errMCPNoLog: the database file does not exist yet.
	errMCPNoLog = errors.New("no task log")
	// errMCPNoTask: the call names no task and the server has no current one.
	errMCPNoTask = errors.New("no current task")
	// errMCPUnknownTask: the task named (or the agent session's) has no log in the database.
	errMCPUnknownTask = errors.New("no such task")
)

// withDB opens the log read-only for one call and closes it after: bbolt lets one process at a
// time hold the file for writing, and the hooks of the same agent write between calls.
func (s *mcpServer) withDB(fn func(db store.Store) error) error {
	loc := s.cfg.loc
	if !loc.isNATS() {
		loc = fileLoc(s.cfg.db)
	}
	db, err := openExisting(loc, s.cfg.timeout)
	if errors.Is(err, errNoLog) {
		return fmt.Errorf("%w at %s yet (the agent's hooks, 'replay record' or 'replay import' create it)", errMCPNoLog, s.cfg.db)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// taskFor resolves the task a call is about: the one it names, else --task, else the task the
// hooks write for this agent session.
func (s *mcpServer) taskFor(db store.Store, named string) (uuid.UUID, error) {
	arg, from := named, "the call"
	switch {
	case arg != "":
	case s.cfg.task != "":
		arg, from = s.cfg.task, "--task"
	case s.cfg.session != "":
		id := mcpSessionTask(s.cfg.agent, s.cfg.session)
		if _, ok, err := mcpTaskInfo(db, id); err != nil {
			return uuid.Nil, err
		} else if !ok {
			return uuid.Nil, fmt.Errorf("%w: the task of %s session %s (%s) has no log in %s yet; the tasks are: %s",
				errMCPUnknownTask, s.cfg.agent, s.cfg.session, id, db.Path(), mcpTaskList(db))
		}
		return id, nil
	default:
		return uuid.Nil, fmt.Errorf("%w: name one (task), start the server with --task, or from an agent session; the tasks are: %s",
			errMCPNoTask, mcpTaskList(db))
	}
	id, err := resolveTask(db, arg)
	if err != nil {
		return uuid.Nil, fmt.Errorf("%s names task %q: %w; the tasks are: %s", from, arg, err, mcpTaskList(db))
	}
	if _, ok, err := mcpTaskInfo(db, id); err != nil {
		return uuid.Nil, err
	} else if !ok {
		return uuid.Nil, fmt.Errorf("%s names task %s: %w in %s; the tasks are: %s", from, id, errMCPUnknownTask, db.Path(), mcpTaskList(db))
	}
	return id, nil
}

// mcpTaskInfo finds a task of the database.
func mcpTaskInfo(db store.Store, id uuid.UUID) (store.TaskInfo, bool, error) {
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

// mcpTaskList names the tasks of the database, at most mcpNamesShown of them.
func mcpTaskList(db store.Store) string {
	tasks, err := db.Tasks()
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	names := make([]string, len(tasks))
	for i, t := range tasks {
		names[i] = fmt.Sprintf("%s (%d events, turn %d)", t.Task, t.Events, t.LastTurn)
	}
	return mcpBounded(names, mcpNamesShown)
}

// mcpSessionTask is the task the hooks of an agent session write to.
func mcpSessionTask(agent, session string) uuid.UUID {
	return agentlog.TaskID(agentlog.Agent(agent), session)
}
