package agentlog

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// ErrHookPayload is returned for stdin that is not a hook payload of a known agent.
var ErrHookPayload = errors.New("not a hook payload")

// taskNamespace is the UUIDv5 namespace of task ids made from agent session ids.
var taskNamespace = uuid.MustParse("6f1c3f9e-5d0a-4b8e-9a57-2a4c1e7d9b30")

// TaskID is the task id of an agent's session: a UUIDv5 of the agent's name and the session id
// it reports (Claude Code's session_id, Cline's taskId, Cursor's conversation_id, …), so every
// hook of one session, and anything else that knows the session id, finds the same task.
func TaskID(agent Agent, sessionID string) uuid.UUID {
	return uuid.NewSHA1(taskNamespace, []byte(string(agent)+"\x00"+sessionID))
}

// HookKind is what a hook event means to tasklog, whatever the agent calls it.
type HookKind string

// The hook kinds.
const (
	HookSessionStart HookKind = "session_start"
	HookPrompt       HookKind = "prompt"
	HookPreTool      HookKind = "pre_tool"
	HookPostTool     HookKind = "post_tool"
	HookInstructions HookKind = "instructions_loaded"
	HookCompact      HookKind = "compact"
	HookStop         HookKind = "stop"
	HookSessionEnd   HookKind = "session_end"
	HookOther        HookKind = "other"
)

// Hook is one hook payload, read: who sent it, what it records, and how a reply reaches the
// model.
type Hook struct {
	// Agent is the dialect recognised from the payload (it may differ from the agent the hook
	// was installed for: VS Code's Copilot runs Claude Code's settings files).
	Agent Agent
	// Event is the agent's name of the hook event ("PreToolUse", "tool_call", "afterFileEdit").
	Event string
	// Kind is what the event means.
	Kind HookKind
	// SessionID is the agent's session (or task, or conversation) id.
	SessionID string
	// Cwd is the working directory the agent reported, resolved; empty when it reported none.
	Cwd string
	// Roots are the workspace roots: the agent's list when it gives one, else the cwd.
	Roots []string
	// Model is the model id, when the payload names it.
	Model string
	// Records are the events the payload says happened, in order, each with its idempotency
	// key.
	Records []Record
	// Channel is where a reply's text reaches the model (events.ChannelPrompt, …); empty when
	// no reply to this event reaches it.
	Channel string
	// Redeliver is set for an event after which what was delivered before is gone from the
	// model's view (a session resumed after a compaction): the hook decides and delivers even
	// though it records nothing new.
	Redeliver bool
}

// Record is one event to record, with the key that makes recording it idempotent.
type Record struct {
	// Key is the idempotency key: agent, session, what happened and the agent's id for it (a
	// tool_use_id, a prompt id or the prompt's hash). The event id is derived from it, so the
	// same hook run twice records the event once.
	Key string
	// Payload is the event.
	Payload events.Payload
	// Trigger marks a record whose first recording calls for a decision (a prompt, a tool
	// call); the others (file writes, stops) do not.
	Trigger bool
}

// TaskID is the task the hook's session maps to.
func (h *Hook) TaskID() uuid.UUID { return TaskID(h.Agent, h.SessionID) }

// Origin is where a hook runs, as the process that handles it finds out (outside any
// projection) and task_started records it.
type Origin struct {
	// OS is the operating system, as Go names it.
	OS string
	// Machine names the machine; "" records none.
	Machine string
	// User is the account the agent runs under; "" records none.
	User string
}

// Started is the task_started payload of a task that begins with this hook: its roots, the
// agent's cwd, the agent as the runtime and where it runs.
func (h *Hook) Started(o Origin) *events.TaskStarted {
	roots := h.Roots
	if roots == nil {
		roots = []string{}
	}
	return &events.TaskStarted{Roots: roots, Cwd: h.Cwd, OS: o.OS, Runtime: events.Runtime{Name: string(h.Agent)},
		Session: h.SessionID, Machine: o.Machine, User: o.User}
}

// ParseHook reads one hook payload. The dialect comes from the payload itself; hint, the agent
// the hook was installed for, settles what the payload leaves open (Claude Code and Codex
// payloads share one shape). Errors wrap ErrHookPayload.
func ParseHook(hint Agent, payload []byte) (*Hook, error) {
	v, err := decodeAny(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHookPayload, err)
	}
	if obj(v) == nil {
		return nil, fmt.Errorf("%w: the payload is not a JSON object", ErrHookPayload)
	}
	agent := detectHook(hint, v)
	d := DialectOf(agent)
	if d == nil || d.Parse == nil {
		return nil, fmt.Errorf("%w: no dialect reads %s payloads", ErrHookPayload, agent)
	}
	h, err := d.Parse(agent, v)
	if err != nil {
		return nil, err
	}
	if h.SessionID == "" {
		return nil, fmt.Errorf("%w: %s %s payload has no session id", ErrHookPayload, agent, h.Event)
	}
	for _, r := range h.Records {
		if _, err := events.New(r.Payload); err != nil {
			return nil, fmt.Errorf("%w: %s %s payload: %v", ErrHookPayload, agent, h.Event, err)
		}
	}
	return h, nil
}

// key joins the parts of an idempotency key.
func key(parts ...string) string { return strings.Join(parts, "\x00") }

// digest is a short hex SHA-256 of s, for keys made from text.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

// hookOptions are the import options of hook payloads: patches and commands stay readable up to
// 16 KiB, file contents above are kept as their digest.
var hookOptions = Options{MaxInline: 16 << 10}

// promptRecords are a prompt's user_message and its mentions, resolved against cwd.
func promptRecords(base, text, cwd string, find func(string) []string) []Record {
	recs := []Record{{Key: key(base, "prompt"), Payload: &events.UserMessage{Text: text}, Trigger: true}}
	for i, m := range find(text) {
		mention := &events.Mention{Path: m}
		if p, ok := resolvePath(mentionTarget(m), cwd, homeOf(cwd)); ok {
			mention.Resolved = p
		}
		recs = append(recs, Record{Key: key(base, "mention", fmt.Sprint(i)), Payload: mention})
	}
	return recs
}

// toolRecord is a tool_call keyed by its call id, so Pre and Post of one call record it once.
func toolRecord(base, tool, id string, params any, cwd, root string) Record {
	raw, err := compactParams(params, hookOptions)
	if err != nil {
		raw = []byte("{}")
	}
	tc := &events.ToolCall{Tool: tool, ID: id, Params: raw}
	if cwd != "" && cwd != root {
		tc.Cwd = cwd
	}
	return Record{Key: key(base, "tool_call", id), Payload: tc, Trigger: true}
}

// writeRecords are the file writes of a successful call.
func writeRecords(base, id string, writes []events.FileWrite) []Record {
	out := make([]Record, 0, len(writes))
	for i := range writes {
		out = append(out, Record{Key: key(base, "file_write", id, fmt.Sprint(i)), Payload: &writes[i]})
	}
	return out
}

// resolveWrite resolves a path a tool wrote against cwd.
func resolveWrite(raw, op, cwd string) events.FileWrite {
	p, ok := resolvePath(raw, cwd, homeOf(cwd))
	if !ok {
		p = cleanRaw(raw)
	}
	return events.FileWrite{Path: p, Op: op}
}

// patchWritesAt resolves the operations of patch text against dir.
func patchWritesAt(text, dir string) []events.FileWrite {
	var out []events.FileWrite
	for _, op := range patchFiles(text) {
		out = append(out, resolveWrite(op.Path, op.Op, dir))
	}
	return out
}

// firstRoot is the primary root of roots, or "".
func firstRoot(roots []string) string {
	if len(roots) == 0 {
		return ""
	}
	return roots[0]
}

// resolvedRoots resolves the workspace roots an agent reported.
func resolvedRoots(raw []any) []string {
	var out []string
	for _, r := range raw {
		if p, ok := resolvePath(str(r), "", ""); ok {
			out = append(out, p)
		}
	}
	return out
}
