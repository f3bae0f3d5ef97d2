// Package atif writes a task's log as a trajectory in the Agent Trajectory Interchange Format
// (ATIF v1.7, the schema of Harbor and of NVIDIA's NeMo Agent Toolkit), so that a session
// recorded by tasklog opens in the viewers and evaluation harnesses that read ATIF.
//
// The user's prompts become user steps, the agent's tool calls agent steps, what the agent
// loaded, wrote or compacted system steps; every decision tasklog made, with its deliveries,
// goes into the "extra" of the step it followed (extra.tasklog). The mapping is a pure function
// of the log. ATIF has no place for everything a log holds (rule snapshots, tabs, settings,
// hashes): the native JSON Lines export stays the lossless one.
package atif

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
)

// SchemaVersion is the ATIF version written.
const SchemaVersion = "ATIF-v1.7"

// Trajectory is an ATIF trajectory, the fields tasklog writes.
type Trajectory struct {
	SchemaVersion string        `json:"schema_version"`
	SessionID     string        `json:"session_id,omitempty"`
	TrajectoryID  string        `json:"trajectory_id,omitempty"`
	Agent         Agent         `json:"agent"`
	Steps         []Step        `json:"steps"`
	Notes         string        `json:"notes,omitempty"`
	FinalMetrics  *FinalMetrics `json:"final_metrics,omitempty"`
	Extra         any           `json:"extra,omitempty"`
}

// Agent names the agent system that ran the task.
type Agent struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	ModelName string `json:"model_name,omitempty"`
}

// Step is one step of a trajectory.
type Step struct {
	StepID    int    `json:"step_id"`
	Timestamp string `json:"timestamp,omitempty"`
	// Source is "user", "agent" or "system".
	Source    string       `json:"source"`
	ModelName string       `json:"model_name,omitempty"`
	Message   string       `json:"message"`
	ToolCalls []ToolCall   `json:"tool_calls,omitempty"`
	Obs       *Observation `json:"observation,omitempty"`
	Extra     *StepExtra   `json:"extra,omitempty"`
}

// ToolCall is one tool call of an agent step.
type ToolCall struct {
	ToolCallID   string          `json:"tool_call_id"`
	FunctionName string          `json:"function_name"`
	Arguments    json.RawMessage `json:"arguments"`
}

// Observation is what came back from a step's actions.
type Observation struct {
	Results []ObservationResult `json:"results"`
}

// ObservationResult is one result of an observation.
type ObservationResult struct {
	SourceCallID string `json:"source_call_id,omitempty"`
	Content      string `json:"content,omitempty"`
}

// FinalMetrics sums up the trajectory.
type FinalMetrics struct {
	TotalSteps int `json:"total_steps"`
}

// StepExtra is a step's "extra": what tasklog knows about it.
type StepExtra struct {
	Tasklog StepTasklog `json:"tasklog"`
}

// StepTasklog is the tasklog part of a step's extra: the log events the step stands for, and
// the decisions made (and rules delivered) right after it, before the next step.
type StepTasklog struct {
	Seq        []uint64   `json:"seq"`
	Decisions  []Decision `json:"decisions,omitempty"`
	Deliveries []Delivery `json:"deliveries,omitempty"`
	Load       *Load      `json:"load,omitempty"`
	Write      *Write     `json:"write,omitempty"`
}

// Decision is one of tasklog's decisions: the request it was for and every rule's outcome.
type Decision struct {
	Seq      uint64 `json:"seq"`
	Prompt   int    `json:"prompt"`
	Request  int    `json:"request"`
	Turn     int    `json:"turn"`
	Engine   string `json:"engine"`
	Model    string `json:"model,omitempty"`
	Included []Rule `json:"included"`
	Excluded []Rule `json:"excluded"`
	// ContextPaths counts the candidate paths the rules were evaluated against.
	ContextPaths int `json:"context_paths"`
}

// Rule is one rule's outcome in a decision.
type Rule struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	File    string `json:"file,omitempty"`
	Reason  string `json:"reason"`
	Pattern string `json:"pattern,omitempty"`
	Path    string `json:"path,omitempty"`
	// EvidenceSeq are the events that put Path in the context.
	EvidenceSeq []uint64 `json:"evidence_seq,omitempty"`
}

// Delivery is rules tasklog put in front of the model: never their text, its size and digest.
type Delivery struct {
	Seq      uint64   `json:"seq"`
	Decision uint64   `json:"decision"`
	Hook     string   `json:"hook"`
	Channel  string   `json:"channel"`
	Form     string   `json:"form"`
	Rules    []string `json:"rules"`
	Bytes    int      `json:"bytes"`
	SHA256   string   `json:"sha256"`
}

// Load is an instruction file the agent loaded by itself.
type Load struct {
	Path       string `json:"path"`
	MemoryType string `json:"memory_type,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Write is a file the agent created, edited or deleted.
type Write struct {
	Path string `json:"path"`
	Op   string `json:"op"`
}

// FromLog maps a task's log, in order, to a trajectory.
func FromLog(task uuid.UUID, log []events.Event) (*Trajectory, error) {
	b := builder{t: &Trajectory{SchemaVersion: SchemaVersion, TrajectoryID: task.String(), SessionID: task.String(),
		Agent: Agent{Name: "unknown", Version: "unknown"}}}
	for _, ev := range log {
		if err := b.add(ev); err != nil {
			return nil, fmt.Errorf("trajectory of task %s: %w", task, err)
		}
	}
	if len(b.t.Steps) == 0 {
		return nil, fmt.Errorf("trajectory of task %s: the log has no task_started", task)
	}
	b.t.Notes = "Written by tasklog from task " + task.String() + "; tasklog's decisions and deliveries are in each step's extra.tasklog. " +
		"The native JSON Lines export ('replay export') is the lossless record of the task."
	b.t.FinalMetrics = &FinalMetrics{TotalSteps: len(b.t.Steps)}
	return b.t, nil
}

type builder struct {
	t        *Trajectory
	reqs     session.Requests
	full     *events.Decision
	model    string
	decStep  map[uint64]int // decision seq -> index of the step it went to
	lastStep int
}

func (b *builder) step(ev events.Event, source, message string) *Step {
	b.t.Steps = append(b.t.Steps, Step{StepID: len(b.t.Steps) + 1, Timestamp: ev.Time.UTC().Format(time.RFC3339Nano),
		Source: source, Message: message, Extra: &StepExtra{Tasklog: StepTasklog{Seq: []uint64{ev.Seq}}}})
	b.lastStep = len(b.t.Steps) - 1
	return &b.t.Steps[b.lastStep]
}

func (b *builder) add(ev events.Event) error {
	switch ev.Type {
	case events.TypeTaskStarted, events.TypeUserMessage, events.TypeToolCall, events.TypeFileWrite, events.TypeDecision,
		events.TypeDelivery, events.TypeInstructionsLoaded, events.TypeCompaction, events.TypeAgentStopped, events.TypeSettingsChanged:
	default:
		return nil
	}
	pl, err := ev.Payload()
	if err != nil {
		return err
	}
	if len(b.t.Steps) == 0 && ev.Type != events.TypeTaskStarted {
		return fmt.Errorf("%s: the log does not start with task_started", ev)
	}
	switch p := pl.(type) {
	case *events.TaskStarted:
		if p.Runtime.Name != "" {
			b.t.Agent.Name = p.Runtime.Name
		}
		if p.Runtime.Version != "" {
			b.t.Agent.Version = p.Runtime.Version
		}
		if p.Session != "" {
			b.t.SessionID = p.Session
		}
		b.step(ev, "system", "task started in "+strings.Join(p.Roots, ", "))
		b.decStep = map[uint64]int{}
	case *events.SettingsChanged:
		if p.Model != "" {
			b.model = p.Model
		}
	case *events.UserMessage:
		b.reqs.Add(ev)
		b.step(ev, "user", p.Text)
	case *events.ToolCall:
		id := p.ID
		if id == "" {
			id = fmt.Sprintf("seq-%d", ev.Seq)
		}
		args := p.Params
		if len(args) == 0 || args[0] != '{' {
			args = json.RawMessage(`{}`)
		}
		s := b.step(ev, "agent", "")
		s.ModelName = b.model
		s.ToolCalls = []ToolCall{{ToolCallID: id, FunctionName: p.Tool, Arguments: args}}
		if p.Failed {
			s.Obs = &Observation{Results: []ObservationResult{{SourceCallID: id, Content: "the tool call failed"}}}
		}
	case *events.FileWrite:
		s := b.step(ev, "system", fmt.Sprintf("the agent wrote %s (%s)", p.Path, p.Op))
		s.Extra.Tasklog.Write = &Write{Path: p.Path, Op: p.Op}
	case *events.InstructionsLoaded:
		msg := b.t.Agent.Name + " loaded " + p.Path
		if p.Reason != "" {
			msg += " (" + p.Reason + ")"
		}
		s := b.step(ev, "system", msg)
		s.Extra.Tasklog.Load = &Load{Path: p.Path, MemoryType: p.MemoryType, Reason: p.Reason}
	case *events.Compaction:
		b.step(ev, "system", "the agent compacted its context "+p.Trigger)
	case *events.AgentStopped:
		msg := "the agent finished its " + p.Scope
		if p.Reason != "" {
			msg += " (" + p.Reason + ")"
		}
		b.step(ev, "system", msg)
	case *events.Decision:
		full, err := p.Apply(b.full)
		if err != nil {
			return fmt.Errorf("%s: %w", ev, err)
		}
		b.full = full
		if full.Model != "" && b.t.Agent.ModelName == "" {
			b.t.Agent.ModelName = full.Model
		}
		pos := b.reqs.Add(ev)
		x := &b.t.Steps[b.lastStep].Extra.Tasklog
		x.Decisions = append(x.Decisions, decision(ev.Seq, full, pos))
		b.decStep[ev.Seq] = b.lastStep
	case *events.Delivery:
		i, ok := b.decStep[p.Decision]
		if !ok {
			i = b.lastStep
		}
		names := make([]string, len(p.Rules))
		for j, r := range p.Rules {
			names[j] = r.Name
		}
		x := &b.t.Steps[i].Extra.Tasklog
		x.Deliveries = append(x.Deliveries, Delivery{Seq: ev.Seq, Decision: p.Decision, Hook: p.Hook, Channel: p.Channel,
			Form: p.Form, Rules: names, Bytes: p.Bytes, SHA256: p.SHA256})
	}
	return nil
}

func decision(seq uint64, d *events.Decision, pos session.Position) Decision {
	out := Decision{Seq: seq, Prompt: pos.Prompt, Request: pos.Request, Turn: d.Turn, Engine: d.Engine, Model: d.Model,
		Included: []Rule{}, Excluded: []Rule{}, ContextPaths: len(d.Context)}
	for _, o := range d.Included {
		out.Included = append(out.Included, rule(d, o))
	}
	for _, o := range d.Excluded {
		out.Excluded = append(out.Excluded, rule(d, o))
	}
	return out
}

func rule(d *events.Decision, o events.RuleOutcome) Rule {
	r := Rule{ID: o.ID, Name: o.Name, File: o.Path, Reason: o.Reason}
	if len(o.Matches) > 0 {
		m := o.Matches[0]
		r.Pattern, r.Path = m.Pattern, m.Path
		for _, s := range events.SourcesOf(d.Context, m.Root, m.Path) {
			r.EvidenceSeq = append(r.EvidenceSeq, s.Seq)
		}
	}
	return r
}

// WriteTask reads a task's log and writes its trajectory as indented JSON.
func WriteTask(ctx context.Context, er session.EventReader, task uuid.UUID, w io.Writer) error {
	var log []events.Event
	for ev, err := range er.Events(ctx, task, 1) {
		if err != nil {
			return fmt.Errorf("trajectory of task %s: %w", task, err)
		}
		log = append(log, ev)
	}
	t, err := FromLog(task, log)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}
