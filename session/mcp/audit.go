package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// AuditIn is the audit tool's input: the request to show, by prompt and request or by turn.
type AuditIn struct {
	Prompt  *int   `json:"prompt,omitempty" jsonschema:"show the rules of this prompt (user message) at its last request, unless request is given; default: the task's last request"`
	Request int    `json:"request,omitempty" jsonschema:"with prompt: the request of that prompt, from 1"`
	Turn    int    `json:"turn,omitempty" jsonschema:"show the rules of the decision of this turn instead"`
	Task    string `json:"task,omitempty" jsonschema:"a task id or unique prefix (default: the current task)"`
}

// AuditOut is the audit tool's answer: one request's rules side by side, and every finding.
type AuditOut struct {
	Task       string                 `json:"task"`
	Agent      string                 `json:"agent"`
	AgentLoads string                 `json:"agent_loads" jsonschema:"reported: the agent reports the files it loads; unknown: agent_loaded is null"`
	Workspace  session.AuditWorkspace `json:"workspace" jsonschema:"where the file list of the never_applicable check came from (the log does not record it)"`
	Requests   int                    `json:"requests" jsonschema:"how many requests the task has"`
	// Request is the one request shown: every rule side by side.
	Request  *session.AuditRequest `json:"request,omitempty" jsonschema:"the request shown: every rule with tasklog's decision, the agent's load, the delivery, whether the model held it, and the findings"`
	Findings []audit.Finding       `json:"findings" jsonschema:"every finding of the task, errors first"`
}

// WhyIn is the why tool's input: the rule, and the request, by prompt and request or by turn.
type WhyIn struct {
	Rule    string `json:"rule" jsonschema:"the rule, by name or id"`
	Prompt  *int   `json:"prompt,omitempty" jsonschema:"the prompt (user message), at its last request unless request is given; default: the task's last request"`
	Request int    `json:"request,omitempty" jsonschema:"with prompt: the request of that prompt, from 1"`
	Turn    int    `json:"turn,omitempty" jsonschema:"the decision of this turn instead"`
	Task    string `json:"task,omitempty" jsonschema:"a task id or unique prefix (default: the current task)"`
}

// addAuditTools adds the audit and why tools.
func (s *server) addAuditTools(srv *sdk.Server) {
	sdk.AddTool(srv, &sdk.Tool{Name: "audit", Title: "Did the agent get each rule",
		Description: "For a request of the current task (default the last), every rule side by side: tasklog's decision, whether the agent loaded it, whether tasklog delivered it, whether the model held it; and every finding of the task (broken, missed_by_agent, loaded_not_applicable, never_applicable, shadowed, duplicate)."},
		s.audit)
	sdk.AddTool(srv, &sdk.Tool{Name: "why", Title: "Why a rule was or was not in the prompt",
		Description: "One rule at one request of the current task, in sentences: applied or not and why (pattern, path, the event that put it there; or what was missing and which paths would match), whether the agent loaded it, whether tasklog delivered it."},
		s.why)
}

// auditAt is what the audit and why tools start from: the task a call names (or the current
// one), the turn it names (or the last), and the folders whose files the audit lists.
func (s *server) auditAt(ctx context.Context, db store.Store, name string, turn int, prompt *int, request int) (uuid.UUID, int, []session.Root, error) {
	task, err := s.taskFor(db, name)
	if err != nil {
		return uuid.Nil, 0, nil, err
	}
	if turn, err = momentOf(ctx, db, task, turn, prompt, request); err != nil {
		return uuid.Nil, 0, nil, err
	}
	roots, err := s.cfg.Folders.AuditRoots(ctx, db, task, true)
	return task, turn, roots, err
}

// momentOf is the turn a call names (by turn, or prompt and request), or the last one.
func momentOf(ctx context.Context, db store.Store, task uuid.UUID, turn int, prompt *int, request int) (int, error) {
	if prompt != nil || turn != 0 {
		return turnOf(ctx, db, task, turn, prompt, request)
	}
	reqs, err := session.RequestsOf(ctx, db, task)
	if err != nil {
		return 0, err
	}
	if reqs.Decided() == 0 {
		return 0, fmt.Errorf("task %s has no decision yet", task)
	}
	return reqs.Decided(), nil
}

func (s *server) audit(ctx context.Context, _ *sdk.CallToolRequest, in AuditIn) (*sdk.CallToolResult, AuditOut, error) {
	var out AuditOut
	err := s.withDB(func(db store.Store) error {
		task, turn, roots, err := s.auditAt(ctx, db, in.Task, in.Turn, in.Prompt, in.Request)
		if err != nil {
			return err
		}
		rep, err := session.Audit(ctx, db, task, session.AuditOptions{Workspace: roots})
		if err != nil {
			return err
		}
		out = AuditOut{Task: rep.Task, Agent: rep.Agent, AgentLoads: rep.AgentLoads, Workspace: rep.Workspace,
			Requests: len(rep.Requests), Request: &rep.Requests[turn-1], Findings: rep.Findings}
		return nil
	})
	if err != nil {
		return nil, out, err
	}
	var b strings.Builder
	r := out.Request
	fmt.Fprintf(&b, "task %s (%s, agent loads %s), prompt %d, request %d (turn %d):\n", out.Task, out.Agent, out.AgentLoads, r.Prompt, r.Request, r.Turn)
	for _, e := range r.Rules {
		fmt.Fprintf(&b, "- %s: %s (%s); agent loaded %s; delivered %s; held %s\n", orDefault(e.Path, e.Rule), e.Decision, e.Reason,
			audit.YesNo(e.AgentLoaded), audit.YesNo(&e.Delivered), audit.YesNo(e.Held))
	}
	if len(out.Findings) == 0 {
		b.WriteString("no findings\n")
	}
	for _, f := range out.Findings {
		fmt.Fprintf(&b, "%s: %s\n", f.Severity, f)
	}
	return textResult(b.String()), out, nil
}

func (s *server) why(ctx context.Context, _ *sdk.CallToolRequest, in WhyIn) (*sdk.CallToolResult, session.WhyAnswer, error) {
	var out session.WhyAnswer
	if in.Rule == "" {
		return nil, out, errors.New("rule: name the rule, by name or id")
	}
	err := s.withDB(func(db store.Store) error {
		task, turn, roots, err := s.auditAt(ctx, db, in.Task, in.Turn, in.Prompt, in.Request)
		if err != nil {
			return err
		}
		w, err := session.Why(ctx, db, task, turn, in.Rule, session.AuditOptions{Workspace: roots})
		if errors.Is(err, session.ErrNoRule) {
			rec, _ := session.DecisionAt(ctx, db, task, turn)
			return fmt.Errorf("turn %d of task %s decided about no rule %q; the rules are: %s", turn, task, in.Rule,
				bounded(outcomeNames(rec.Decision), namesShown))
		} else if err != nil {
			return err
		}
		out = *w
		return nil
	})
	if err != nil {
		return nil, out, err
	}
	return textResult(out.String()), out, nil
}

// orDefault is s, or alt when s is empty.
func orDefault(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
