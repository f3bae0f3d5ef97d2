package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Payload is the typed content of an event. Every payload type of this package implements it.
type Payload interface {
	// EventType is the type the payload is recorded under.
	EventType() Type
	validate() error
}

// TaskStarted opens a task's log: the workspace it runs in, the runtime that records it and the
// engine configuration every later decision uses.
type TaskStarted struct {
	// Roots are the absolute workspace roots, in the runtime's order; the first is the primary.
	Roots []string `json:"roots"`
	// Runtime names the agent runtime that records the task.
	Runtime Runtime `json:"runtime,omitzero"`
	// OS is the operating system the task runs on, as Go names it ("linux", "windows", …).
	OS string `json:"os,omitempty"`
	// Config is the engine configuration (windows, caps, snapshot interval) as a JSON object;
	// absent means the defaults of the projections package.
	Config json.RawMessage `json:"config,omitempty"`
	// Cwd is the working directory the agent started in, when it differs from the primary
	// root or the runtime reports both (agent hooks do).
	Cwd string `json:"cwd,omitempty"`
	// Session is the agent's own id of the session (its session_id), when the task was recorded
	// from the agent's hooks; absent in tasks recorded before it was kept.
	Session string `json:"session,omitempty"`
	// Machine names the machine the task was recorded on (its host name, or the label
	// $TASKLOG_MACHINE gave the hook); absent in tasks recorded before it was kept.
	Machine string `json:"machine,omitempty"`
	// User is the account the agent ran under on that machine (or the label $TASKLOG_USER
	// gave the hook); absent in tasks recorded before it was kept.
	User string `json:"user,omitempty"`
}

// Runtime names an agent runtime and its version.
type Runtime struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// UserMessage is the text a human sent.
type UserMessage struct {
	Text string `json:"text"`
	// Guesses are the path-like strings of the text and whether the workspace confirmed each,
	// checked when the message was recorded. Absent (nil) in events recorded before guesses were
	// checked: the projection then reads the text as it always did.
	Guesses []Guess `json:"guesses,omitzero"`
}

// Guess is a path read from prose or a shell command line rather than named by a tool, and what
// the workspace said of it when it was recorded.
type Guess struct {
	// Path is the path as read (relative to the working directory, or absolute).
	Path string `json:"path"`
	// Confirmed is set when the path existed in a root or was named by other evidence.
	Confirmed bool `json:"confirmed"`
	// Why says how it was confirmed or why not: "exists", "seen", "mention" (an inline @mention,
	// which is no guess), "not_found", "no_workspace".
	Why string `json:"why,omitempty"`
}

// Mention is an @mention of a workspace path.
type Mention struct {
	// Path is the mention as the user wrote it, for example "/src/a.ts" or "src/a.ts".
	Path string `json:"path"`
	// Resolved is the path the runtime resolved it to (absolute or root-relative); empty when
	// the runtime did not resolve it, in which case Path is used.
	Resolved string `json:"resolved,omitempty"`
}

// ToolCall is a tool the model called.
type ToolCall struct {
	// Tool is the tool's name as the agent calls it ("read_file", "Edit", "apply_patch").
	Tool string `json:"tool"`
	// ID is the call id the model gave, when it gave one.
	ID string `json:"id,omitempty"`
	// Params are the call's parameters, a JSON object.
	Params json.RawMessage `json:"params"`
	// Cwd is the working directory the call ran in when it differs from the primary root.
	Cwd string `json:"cwd,omitempty"`
	// Failed is set when the runtime knows the call did not succeed.
	Failed bool `json:"failed,omitempty"`
	// Guesses are the paths read from the call's shell command line, checked when the call was
	// recorded (see UserMessage.Guesses); nil in events recorded before guesses were checked.
	Guesses []Guess `json:"guesses,omitzero"`
}

// TabSnapshot is the editor's open and visible tabs; each snapshot replaces the previous one.
type TabSnapshot struct {
	Open    []string `json:"open"`
	Visible []string `json:"visible"`
}

// File write operations.
const (
	OpCreate = "create"
	OpEdit   = "edit"
	OpDelete = "delete"
)

// FileWrite is a file the agent created, edited or deleted.
type FileWrite struct {
	Path string `json:"path"`
	Op   string `json:"op"`
}

// SettingsChanged records a change of mode, provider, model or agent version; empty fields are
// unchanged.
type SettingsChanged struct {
	Mode     string `json:"mode,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// AgentVersion is the version of the agent program, as the agent reports it ("2.1.332").
	AgentVersion string `json:"agent_version,omitempty"`
}

// RuleToggled records a user turning a rule on or off.
type RuleToggled struct {
	Rule    string `json:"rule"`
	Enabled bool   `json:"enabled"`
}

// RulesSnapshot records the rule files a decision evaluates; their contents are blobs in the
// store, addressed by SHA-256.
type RulesSnapshot struct {
	Files []SnapshotFile `json:"files"`
}

// SnapshotFile is one rule file in a RulesSnapshot.
type SnapshotFile struct {
	Provider string `json:"provider"`
	Scope    string `json:"scope"`
	Root     string `json:"root,omitempty"`
	Path     string `json:"path"`
	Blob     string `json:"blob"`
	// Size is the file's size when it was read, above the blob's length when the reader
	// truncated an oversized file; 0 for a rule that is no file (a remote rule).
	Size          int64 `json:"size"`
	AlwaysEnabled bool  `json:"always_enabled,omitempty"`
	// ReadError is set when the file could not be read; the blob is then empty.
	ReadError string `json:"read_error,omitempty"`
}

// RuleTriggered records a stream-triggered rule firing on the model's output.
type RuleTriggered struct {
	Rule   string `json:"rule"`
	Name   string `json:"name"`
	Source string `json:"source"`
	Match  string `json:"match"`
}

// EventType implements Payload.
func (*TaskStarted) EventType() Type { return TypeTaskStarted }

// EventType implements Payload.
func (*UserMessage) EventType() Type { return TypeUserMessage }

// EventType implements Payload.
func (*Mention) EventType() Type { return TypeMention }

// EventType implements Payload.
func (*ToolCall) EventType() Type { return TypeToolCall }

// EventType implements Payload.
func (*TabSnapshot) EventType() Type { return TypeTabSnapshot }

// EventType implements Payload.
func (*FileWrite) EventType() Type { return TypeFileWrite }

// EventType implements Payload.
func (*SettingsChanged) EventType() Type { return TypeSettingsChanged }

// EventType implements Payload.
func (*RuleToggled) EventType() Type { return TypeRuleToggled }

// EventType implements Payload.
func (*RulesSnapshot) EventType() Type { return TypeRulesSnapshot }

// EventType implements Payload.
func (*RuleTriggered) EventType() Type { return TypeRuleTriggered }

func (p *TaskStarted) validate() error {
	for i, r := range p.Roots {
		if r == "" {
			return fmt.Errorf("roots[%d] is empty", i)
		}
	}
	if len(p.Config) > 0 && !isJSONObject(p.Config) {
		return errors.New("config must be a JSON object")
	}
	return nil
}

func (p *UserMessage) validate() error { return validateGuesses(p.Guesses) }

func validateGuesses(gs []Guess) error {
	for i, g := range gs {
		if g.Path == "" {
			return fmt.Errorf("guesses[%d]: path is empty", i)
		}
	}
	return nil
}

func (p *Mention) validate() error {
	if p.Path == "" {
		return errors.New("path is empty")
	}
	return nil
}

func (p *ToolCall) validate() error {
	if len(p.Params) == 0 {
		p.Params = json.RawMessage("{}")
	}
	if !isJSONObject(p.Params) {
		return errors.New("params must be a JSON object")
	}
	return p.validateFields()
}

// validateFields is validate less the check of the params.
func (p *ToolCall) validateFields() error {
	if p.Tool == "" {
		return errors.New("tool is empty")
	}
	return validateGuesses(p.Guesses)
}

// validateDecoded is p.validate less what decodeFast (fast) has checked already: the params it
// read are a JSON object.
func validateDecoded(p Payload, fast bool) error {
	if tc, ok := p.(*ToolCall); ok && fast && len(tc.Params) > 0 {
		return tc.validateFields()
	}
	return p.validate()
}

func (p *TabSnapshot) validate() error {
	if p.Open == nil {
		p.Open = []string{}
	}
	if p.Visible == nil {
		p.Visible = []string{}
	}
	return nil
}

func (p *FileWrite) validate() error {
	if p.Path == "" {
		return errors.New("path is empty")
	}
	switch p.Op {
	case OpCreate, OpEdit, OpDelete:
		return nil
	}
	return fmt.Errorf("op %q is not one of create, edit, delete", p.Op)
}

func (p *SettingsChanged) validate() error {
	switch p.Mode {
	case "", "act", "plan":
		return nil
	}
	return fmt.Errorf("mode %q is not act or plan", p.Mode)
}

func (p *RuleToggled) validate() error {
	if p.Rule == "" {
		return errors.New("rule is empty")
	}
	return nil
}

func (p *RulesSnapshot) validate() error {
	if p.Files == nil {
		p.Files = []SnapshotFile{}
	}
	for i, f := range p.Files {
		if f.Path == "" || len(f.Blob) != 64 {
			return fmt.Errorf("files[%d] needs path and blob", i)
		}
	}
	return nil
}

// checkBlobSums refuses, in a line read, a blob not named as blobs are: its content's SHA-256
// in 64 lowercase hex digits. Another spelling of the same sum would find the blob in a store
// but name a blob line no import accepts. (A log that holds one, written by an older version,
// still reads: validate does not ask for it.)
func (p *RulesSnapshot) checkBlobSums() error {
	for i, f := range p.Files {
		if !isBlobSum(f.Blob) {
			return fmt.Errorf("files[%d]: blob %q is not a SHA-256 sum in 64 lowercase hex digits", i, f.Blob)
		}
	}
	return nil
}

// isBlobSum reports whether sum is a SHA-256 sum as blobs are named: 64 lowercase hex digits.
func isBlobSum(sum string) bool {
	if len(sum) != 64 {
		return false
	}
	for i := range len(sum) {
		if c := sum[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (p *RuleTriggered) validate() error {
	if p.Rule == "" {
		return errors.New("rule is empty")
	}
	return nil
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}
