package rules

// EvaluationContext is everything the conditional evaluators may look at when they decide whether
// a rule applies. It is built by the projections package from a task's log and must be treated as
// read-only: evaluators never reach past it to the file system, the clock or the environment.
type EvaluationContext struct {
	// Paths are the candidate workspace paths the next request is about: root-relative POSIX
	// paths, directories ending in "/", deduplicated and sorted by Path.
	Paths []ContextPath `json:"paths"`
	// Mode is the agent's mode ("act" or "plan"); empty when unknown.
	Mode string `json:"mode,omitempty"`
	// Provider is the model provider id (for example "anthropic"); empty when unknown.
	Provider string `json:"provider,omitempty"`
	// Model is the model id (for example "claude-sonnet-4-5"); empty when unknown.
	Model string `json:"model,omitempty"`
	// OS is the operating system the task runs on, as Go names it ("linux", "darwin",
	// "windows"); empty when unknown.
	OS string `json:"os,omitempty"`
	// Rules are the rule names the user mentioned (for example "@rule:name"): manual rules
	// apply only when named here.
	Rules []string `json:"rules,omitempty"`
}

// ContextPath is one candidate path with the evidence that put it into the context.
type ContextPath struct {
	// Path is relative to Root, in POSIX form; a directory ends in "/".
	Path string `json:"path"`
	// Root is the workspace root the path belongs to, as recorded in task_started.
	Root string `json:"root,omitempty"`
	// Sources lists every piece of evidence for the path, oldest first.
	Sources []Source `json:"sources"`
}

// Source is one piece of evidence for a context path: which kind of event contributed it, at
// which sequence number and turn.
type Source struct {
	// Kind is the evidence source: one of the SourceKind constants.
	Kind SourceKind `json:"kind"`
	// Seq is the sequence number of the event that contributed the path.
	Seq uint64 `json:"seq"`
	// Turn is the turn of that event.
	Turn int `json:"turn"`
	// Detail says more where it helps a reader, for example the tool name of a tool_call.
	Detail string `json:"detail,omitempty"`
}

// SourceKind names an evidence source of the context.
type SourceKind string

// The evidence sources, in descending order of confidence.
const (
	SourceMention   SourceKind = "mention"    // an @mention the runtime resolved
	SourceTool      SourceKind = "tool_call"  // a path a tool call targeted
	SourceFileWrite SourceKind = "file_write" // a file the agent wrote, edited or deleted
	SourceProse     SourceKind = "prose"      // a path-like string in the user's message
	SourceTab       SourceKind = "tab"        // an open tab or visible editor
	SourceShell     SourceKind = "shell"      // a path-like string in a shell command (low confidence)
)
