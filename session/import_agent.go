package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// AgentImportOptions configure ImportAgent.
type AgentImportOptions struct {
	// Agent is the agent that wrote the session.
	Agent agentlog.Agent
	// Content says what to keep of large payloads.
	Content agentlog.Options
	// Roots maps the roots the session recorded (its working directory) to file systems to
	// read rules from; nil, or a root without a file system, decides against no rule files of
	// that root.
	Roots func(recorded []string) ([]Root, error)
	// Home and Remote are the global and remote rules, as in Options.
	Home   fs.FS
	Remote []rules.RemoteRule
	// IDs makes event ids; nil means a new source on crypto/rand.
	IDs *events.IDSource
}

// ErrNoStart is returned when an imported session yields no task_started event first.
var ErrNoStart = errors.New("imported session does not start with task_started")

// ImportAgent turns one agent session (a Cline task folder, a Claude Code transcript, a pi
// session, a Codex rollout) into a new task: every mapped record is recorded with its time and
// origin, and at every model request a decision is made against the rule files opts.Roots
// names, exactly as a runtime would have. Decisions are stamped with the time of the last
// record before them, so an import is reproducible.
func ImportAgent(ctx context.Context, db store.Store, path string, opts AgentImportOptions) (*Session, agentlog.Report, error) {
	var s *Session
	var last time.Time
	clock := func() time.Time { return last }
	emit := func(it agentlog.Item) error {
		if it.Turn {
			if s == nil {
				return ErrNoStart
			}
			_, err := s.Decide(ctx)
			return err
		}
		ev := it.Event
		if !ev.Time.IsZero() {
			last = ev.Time
		}
		if s != nil {
			_, err := s.RecordEvent(ctx, *ev)
			return err
		}
		if ev.Type != events.TypeTaskStarted {
			return fmt.Errorf("%w (first event is %s)", ErrNoStart, ev.Type)
		}
		p, err := ev.Payload()
		if err != nil {
			return err
		}
		recorded := p.(*events.TaskStarted).Roots
		roots := make([]Root, len(recorded))
		for i, r := range recorded {
			roots[i] = Root{Path: r}
		}
		if opts.Roots != nil {
			if roots, err = opts.Roots(recorded); err != nil {
				return err
			}
		}
		s, err = Open(ctx, db, uuid.Nil, Options{Roots: roots, Home: opts.Home, Remote: opts.Remote,
			Now: clock, IDs: opts.IDs, Started: ev})
		return err
	}
	rep, err := agentlog.Import(opts.Agent, path, opts.Content, emit)
	if err != nil {
		return s, rep, fmt.Errorf("import %s session %s: %w", opts.Agent, path, err)
	}
	if s == nil {
		return nil, rep, fmt.Errorf("import %s session %s: %w", opts.Agent, path, ErrNoStart)
	}
	return s, rep, nil
}
