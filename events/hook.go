package events

import (
	"errors"
	"fmt"
	"strings"
)

// The event types a runtime living inside an agent (through the agent's hooks) records besides
// the ones every runtime does.
const (
	TypeDelivery           Type = "delivery"
	TypeInstructionsLoaded Type = "instructions_loaded"
	TypeCompaction         Type = "compaction"
	TypeAgentStopped       Type = "agent_stopped"
)

// Delivery channels: where the delivered text entered the model's input.
const (
	// ChannelSession is text added when the agent's session starts or resumes (after a
	// compaction, too).
	ChannelSession = "session"
	// ChannelPrompt is text added to the user's prompt as it is submitted.
	ChannelPrompt = "prompt"
	// ChannelTool is text added to a tool call's result.
	ChannelTool = "tool"
)

// Delivery forms.
const (
	// FormFull delivers the rules' bodies.
	FormFull = "full"
	// FormNames lists the rules by name and rule:// address only, because their bodies would
	// not fit in the agent's limit for one reply.
	FormNames = "names"
)

// Delivery records rules tasklog put in front of the model: which rules, from which decision,
// through which channel and hook event, and the size and digest of the text. The text itself is
// rendered again from this event and the decision's rules snapshot, so it is not stored.
type Delivery struct {
	// Decision is the sequence number of the decision the rules were chosen by.
	Decision uint64 `json:"decision"`
	// Agent is the agent whose hook delivered ("claude-code", "codex", "cline", …).
	Agent string `json:"agent"`
	// Hook is the agent's name of the hook event ("PreToolUse", "UserPromptSubmit", …).
	Hook string `json:"hook"`
	// Channel is where the text reached the model: ChannelSession, ChannelPrompt or ChannelTool.
	Channel string `json:"channel"`
	// Form is FormFull or FormNames.
	Form string `json:"form"`
	// Rules are the rules delivered, in the decision's order.
	Rules []DeliveredRule `json:"rules"`
	// Bytes is the length of the delivered text in bytes.
	Bytes int `json:"bytes"`
	// SHA256 is the hex SHA-256 of the delivered text.
	SHA256 string `json:"sha256"`
}

// DeliveredRule is one rule of a Delivery.
type DeliveredRule struct {
	// ID is the rule's id in the decision ("cline:/ws/.clinerules/api.md").
	ID string `json:"id"`
	// Name is the rule's name, the one rule://<name> resolves.
	Name string `json:"name"`
}

// InstructionsLoaded records an instruction file the agent loaded by itself (Claude Code's
// InstructionsLoaded hook): tasklog never delivers it again.
type InstructionsLoaded struct {
	// Path is the file's absolute path as the agent reported it.
	Path string `json:"path"`
	// MemoryType is the agent's kind of memory ("Project", "User", "Local", …).
	MemoryType string `json:"memory_type,omitempty"`
	// Reason is why the agent loaded it ("session_start", "nested_traversal", …).
	Reason string `json:"reason,omitempty"`
}

// Compaction records that the agent compacted its conversation: what was delivered before it
// is no longer in front of the model.
type Compaction struct {
	// Trigger is "auto", "manual", or the agent's word for it.
	Trigger string `json:"trigger,omitempty"`
}

// Stop scopes of AgentStopped.
const (
	// StopTurn is the end of the agent's answer to one prompt.
	StopTurn = "turn"
	// StopTask is the end of the agent's session or task.
	StopTask = "task"
)

// AgentStopped records that the agent finished its answer (StopTurn) or its session (StopTask).
type AgentStopped struct {
	// Scope is StopTurn or StopTask.
	Scope string `json:"scope"`
	// Reason is the agent's reason or status, when it gave one.
	Reason string `json:"reason,omitempty"`
}

// EventType implements Payload.
func (*Delivery) EventType() Type { return TypeDelivery }

// EventType implements Payload.
func (*InstructionsLoaded) EventType() Type { return TypeInstructionsLoaded }

// EventType implements Payload.
func (*Compaction) EventType() Type { return TypeCompaction }

// EventType implements Payload.
func (*AgentStopped) EventType() Type { return TypeAgentStopped }

func (p *Delivery) validate() error {
	switch {
	case p.Decision == 0:
		return errors.New("decision is not set")
	case p.Agent == "" || p.Hook == "":
		return errors.New("agent and hook are required")
	case len(p.Rules) == 0:
		return errors.New("rules is empty")
	case len(p.SHA256) != 64:
		return errors.New("sha256 needs 64 hex digits")
	case p.Bytes < 0:
		return errors.New("bytes is negative")
	}
	switch p.Channel {
	case ChannelSession, ChannelPrompt, ChannelTool:
	default:
		return fmt.Errorf("channel %q is not one of session, prompt, tool", p.Channel)
	}
	switch p.Form {
	case FormFull, FormNames:
	default:
		return fmt.Errorf("form %q is not full or names", p.Form)
	}
	for i, r := range p.Rules {
		if r.ID == "" {
			return fmt.Errorf("rules[%d] has no id", i)
		}
	}
	return nil
}

func (p *InstructionsLoaded) validate() error {
	if p.Path == "" {
		return errors.New("path is empty")
	}
	return nil
}

func (p *Compaction) validate() error { return nil }

func (p *AgentStopped) validate() error {
	switch p.Scope {
	case StopTurn, StopTask:
		return nil
	}
	return fmt.Errorf("scope %q is not turn or task", p.Scope)
}

// hookSummary is the one-line summary of the hook event types.
func hookSummary(p Payload) string {
	switch p := p.(type) {
	case *Delivery:
		names := make([]string, len(p.Rules))
		for i, r := range p.Rules {
			names[i] = r.Name
		}
		form := ""
		if p.Form == FormNames {
			form = " by name"
		}
		return fmt.Sprintf("%s %s via %s (%s), %d bytes%s, decision seq %d: [%s]",
			p.Agent, "delivered", p.Channel, p.Hook, p.Bytes, form, p.Decision, strings.Join(names, " "))
	case *InstructionsLoaded:
		s := "agent loaded " + p.Path
		if p.Reason != "" {
			s += " (" + p.Reason + ")"
		}
		return s
	case *Compaction:
		if p.Trigger != "" {
			return "context compacted (" + p.Trigger + ")"
		}
		return "context compacted"
	case *AgentStopped:
		s := "end of " + p.Scope
		if p.Reason != "" {
			s += " (" + p.Reason + ")"
		}
		return s
	}
	return string(p.EventType())
}
