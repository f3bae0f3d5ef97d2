package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// serve answers one message. A panic in an operation is an internal error for this request
// only.
func (s *Server) serve(c *conn, msg []byte) (resp Response) {
	req, err := decodeRequest(msg)
	resp.ID = req.ID
	if err != nil {
		resp.ID = peekID(msg)
		resp.Error = &Error{Code: CodeBadRequest, Message: "not a request: " + err.Error()}
		return resp
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Printf("panic in %s: %v", req.Op, r)
			resp.Result, resp.Error = nil, &Error{Code: CodeInternal, Message: fmt.Sprintf("panic: %v", r)}
		}
	}()
	if !c.hello && req.Op != OpHello {
		resp.Error = &Error{Code: CodeBadRequest, Message: `the first message must be {"op":"hello","version":1}`}
		return resp
	}
	ctx := context.Background()
	if req.DeadlineMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.DeadlineMS)*time.Millisecond)
		defer cancel()
	}
	result, err := s.dispatch(ctx, c, &req)
	if err != nil {
		resp.Error = toError(err)
		if resp.Error.Code == CodeInternal {
			s.log.Printf("%s: %v", req.Op, err)
		}
		return resp
	}
	resp.Result, err = marshal(result)
	if err != nil {
		resp.Error = &Error{Code: CodeInternal, Message: err.Error()}
	}
	return resp
}

func (s *Server) dispatch(ctx context.Context, c *conn, req *Request) (any, error) {
	switch req.Op {
	case OpHello:
		if req.Version != Version {
			return nil, &Error{Code: CodeVersion, Message: fmt.Sprintf("this server speaks version %d, not %d", Version, req.Version)}
		}
		c.hello = true
		return HelloResult{Version: Version, Server: "replay serve", PID: os.Getpid(), DB: s.dbPth}, nil
	case OpHook, OpOpen, OpRecord, OpDecide, OpDeliver, OpExplain, OpClose:
		if !c.hello {
			break
		}
		db, err := s.acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer s.release()
		switch req.Op {
		case OpHook:
			return s.hook(ctx, db, req)
		case OpOpen:
			return s.openTask(ctx, db, req)
		case OpRecord:
			return s.record(ctx, db, req)
		case OpDecide:
			return s.decide(ctx, db, req)
		case OpDeliver:
			return s.deliver(ctx, db, req)
		case OpClose:
			// Closing writes the session's snapshots: the database must stay open meanwhile.
			task, err := parseTask(req.Task)
			if err != nil {
				return nil, err
			}
			_, err = s.tasks.close(task)
			return struct{}{}, err
		}
		return s.explain(ctx, db, req)
	case OpShutdown:
		go s.Shutdown()
		return struct{}{}, nil
	}
	return nil, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("unknown op %q", req.Op)}
}

// hook is what 'replay hook' does with one payload, on the task's open session: record its
// events once, and when the event's reply reaches the model and it brought something new (or
// follows a compaction), decide and deliver. The result is the dialect's reply.
func (s *Server) hook(ctx context.Context, db store.Store, req *Request) (HookResult, error) {
	h, err := agentlog.ParseHook(agentlog.Agent(req.Agent), req.Payload)
	if err != nil {
		return HookResult{}, &Error{Code: CodeBadRequest, Message: err.Error()}
	}
	var text string
	err = s.tasks.with(ctx, db, h.TaskID(), openSpec{agent: h.Agent, started: h.Started(s.origin())}, func(a *session.AgentSession) error {
		var err error
		if req.Again {
			text, err = a.HookAgain(ctx, h)
		} else {
			text, err = a.Hook(ctx, h, true)
		}
		return err
	})
	if err != nil {
		return HookResult{}, err
	}
	return HookResult{Reply: string(h.Reply(text)), Task: h.TaskID().String(), Delivered: text != ""}, nil
}

// origin is where the tasks the server starts run: its machine, as Options named it.
func (s *Server) origin() agentlog.Origin {
	return agentlog.Origin{OS: goos, Machine: s.opts.Machine, User: s.opts.User}
}

// taskOf is the task a request names: "task", or the agent's "session".
func taskOf(req *Request) (uuid.UUID, error) {
	if req.Task != "" {
		return parseTask(req.Task)
	}
	if req.Agent == "" || req.Session == "" {
		return uuid.Nil, &Error{Code: CodeBadRequest, Message: `name the task: "task", or "agent" and "session"`}
	}
	return agentlog.TaskID(agentlog.Agent(req.Agent), req.Session), nil
}

func parseTask(s string) (uuid.UUID, error) {
	t, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("task %q: %v", s, err)}
	}
	return t, nil
}

// openTask opens a task, starting it with the request's roots when the log has none of it.
func (s *Server) openTask(ctx context.Context, db store.Store, req *Request) (OpenResult, error) {
	task, err := taskOf(req)
	if err != nil {
		return OpenResult{}, err
	}
	osName := req.OS
	if osName == "" {
		osName = goos
	}
	roots := req.Roots
	if roots == nil {
		roots = []string{}
	}
	name := req.Agent
	if name == "" {
		name = req.Client
	}
	started := &events.TaskStarted{Roots: roots, Cwd: req.Cwd, OS: osName, Runtime: events.Runtime{Name: name},
		Machine: s.opts.Machine, User: s.opts.User}
	var res OpenResult
	err = s.tasks.with(ctx, db, task, openSpec{agent: agentlog.Agent(req.Agent), started: started}, func(a *session.AgentSession) error {
		res = OpenResult{Task: task.String(), Version: a.Version(), Turn: a.Turn()}
		return nil
	})
	return res, err
}

// existing runs fn on a task that is in the log: a task that is not is not started, since the
// request gives no task_started (session.OpenAgent's error wraps store.ErrTaskNotFound).
func (s *Server) existing(ctx context.Context, db store.Store, req *Request, fn func(a *session.AgentSession) error) error {
	task, err := taskOf(req)
	if err != nil {
		return err
	}
	return s.tasks.with(ctx, db, task, openSpec{agent: agentlog.Agent(req.Agent)}, fn)
}

// record records events, each once by its key (session.AgentSession.RecordHook).
func (s *Server) record(ctx context.Context, db store.Store, req *Request) (RecordResult, error) {
	recs := make([]agentlog.Record, len(req.Events))
	for i, e := range req.Events {
		if e.Key == "" {
			return RecordResult{}, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("event %d: no \"key\": every recorded event needs its idempotency key", i)}
		}
		line, err := json.Marshal(struct {
			Type string          `json:"type"`
			V    int             `json:"v,omitempty"`
			Data json.RawMessage `json:"data,omitempty"`
		}{e.Type, e.V, e.Data})
		if err != nil {
			return RecordResult{}, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("event %d: %v", i, err)}
		}
		l, err := events.ParseLine(line)
		if err != nil {
			return RecordResult{}, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("event %d: %v", i, err)}
		}
		p, err := l.Event.Payload()
		if err != nil {
			return RecordResult{}, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("event %d: %v", i, err)}
		}
		recs[i] = agentlog.Record{Key: e.Key, Payload: p, Trigger: e.Trigger}
	}
	var res RecordResult
	err := s.existing(ctx, db, req, func(a *session.AgentSession) error {
		fresh, err := a.RecordHook(ctx, recs)
		res = RecordResult{Fresh: fresh, Version: a.Version()}
		return err
	})
	return res, err
}

// decisions are the decisions the decide and deliver operations write into (DecideInto): an
// answer takes only a few fields of its decision, whose arrays then serve a later one.
var decisions = sync.Pool{New: func() any { return new(session.Decision) }}

// decide records a decision (session.Session.Decide).
func (s *Server) decide(ctx context.Context, db store.Store, req *Request) (DecideResult, error) {
	var res DecideResult
	err := s.existing(ctx, db, req, func(a *session.AgentSession) error {
		d := decisions.Get().(*session.Decision)
		defer decisions.Put(d)
		if err := a.DecideInto(ctx, d); err != nil {
			return err
		}
		res = DecideResult{Seq: d.Seq, Turn: d.Turn, Prompt: d.Prompt, Included: []RuleInfo{}}
		for o := range d.Included() {
			res.Included = append(res.Included, RuleInfo{ID: o.ID, Name: o.Name, Path: o.Path})
		}
		return nil
	})
	return res, err
}

// deliver decides and delivers what the decision includes that has not reached the model, in
// one commit (session.AgentSession.DecideAndDeliver).
func (s *Server) deliver(ctx context.Context, db store.Store, req *Request) (DeliverResult, error) {
	if req.Key == "" || req.Channel == "" {
		return DeliverResult{}, &Error{Code: CodeBadRequest, Message: `deliver needs "key" (its idempotency key) and "channel"`}
	}
	var res DeliverResult
	err := s.existing(ctx, db, req, func(a *session.AgentSession) error {
		d := decisions.Get().(*session.Decision)
		defer decisions.Put(d)
		del, err := a.DecideAndDeliverInto(ctx, d, req.Hook, req.Channel, req.Key)
		if err != nil {
			return err
		}
		res.Decision, res.Turn = d.Seq, d.Turn
		if del == nil {
			return err
		}
		res.Seq, res.Text = del.Seq, del.Text
		for _, r := range del.Event.Rules {
			res.Rules = append(res.Rules, RuleInfo{ID: r.ID, Name: r.Name})
		}
		return nil
	})
	return res, err
}

// explain explains a rule at a turn (session.Explain), reading the log through the server's
// database.
func (s *Server) explain(ctx context.Context, db store.Store, req *Request) (ExplainResult, error) {
	task, err := taskOf(req)
	if err != nil {
		return ExplainResult{}, err
	}
	x, err := session.Explain(ctx, db, task, req.Turn, req.Rule)
	if err != nil {
		return ExplainResult{}, err
	}
	return ExplainResult{Turn: x.Turn, Seq: x.Seq, Included: x.Included, Rule: x.Rule.ID,
		Deliveries: len(x.Deliveries), Text: x.String()}, nil
}

// toError maps an operation's error to its code.
func toError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, store.ErrTaskNotFound), errors.Is(err, session.ErrNoDecision), errors.Is(err, session.ErrNoRule):
		return &Error{Code: CodeNotFound, Message: err.Error()}
	case errors.Is(err, store.ErrVersionConflict), errors.Is(err, session.ErrRootMismatch), errors.Is(err, session.ErrImportConflict), errors.Is(err, session.ErrAgentMismatch):
		return &Error{Code: CodeConflict, Message: err.Error()}
	case errors.Is(err, session.ErrReserved), errors.Is(err, session.ErrNoAgent), errors.Is(err, events.ErrInvalid), errors.Is(err, events.ErrUnknownType):
		return &Error{Code: CodeBadRequest, Message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &Error{Code: CodeTimeout, Message: err.Error()}
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// peekID finds the id of a message that is not a valid request, to answer it under that id.
func peekID(msg []byte) int64 {
	var v struct {
		ID int64 `json:"id"`
	}
	json.Unmarshal(msg, &v)
	return v.ID
}
