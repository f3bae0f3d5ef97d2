package agentlog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// Dialect describes one agent tasklog works with through its hooks: how its hook payloads are
// told apart, read and answered, which rule files the agent loads by itself, and where its hook
// and MCP configuration lives and in what shape. Every agent is one Dialect, declared in a file
// of its own (agent_NAME.go) and registered there; the hook parser, the hook program, install
// and uninstall, and the MCP installer all read Dialects. The conformance suite
// (agentlog/agenttest) walks every one.
type Dialect struct {
	// Agent is the agent's name, as given to 'replay hook' and 'replay install'.
	Agent Agent
	// Order is the dialect's place in listings (install's usage, HookAgents).
	Order int
	// Payload recognises the agent's hook payloads and answers them neutrally; its Agent is
	// filled in by Register. Zero for an agent without command hooks (pi).
	Payload hookspec.Spec
	// Parse reads a payload recognised as this dialect; agent is the dialect's name (Codex and
	// VS Code's Copilot read Claude Code's shape). Nil for an agent without command hooks.
	Parse func(agent Agent, v any) (*Hook, error)
	// Reply answers a hook whose reply reaches the model (h.Channel set) with text, not empty.
	Reply func(h *Hook, text string) []byte
	// LoadsItself reports whether the agent's own loader puts a rule of source at path (its
	// display path: root-relative, "~/…" for global rules) in front of the model, so that
	// tasklog must not deliver it. Nil: the agent loads none.
	LoadsItself func(source events.RuleSource, path string) bool
	// ResumeKeepsHookText reports whether the agent, at version (empty when unknown), sends the
	// hook text of a session it resumes to the model again, so that a resume (SessionStart
	// source "resume") is no compaction and nothing is delivered again. Nil: it does not.
	ResumeKeepsHookText func(version string) bool
	// Hooks is where and how the agent reads its hook commands.
	Hooks HookConfig
	// MCP is where and how the agent reads its MCP servers.
	MCP MCPConfig
	// InstallNote, when set, is a line install prints after installing the hooks in a project
	// (dir, absolute) with the environment getenv: what the user must still do.
	InstallNote func(dir string, getenv func(string) string) string
}

// HookShape is how an agent's configuration holds its hook commands.
type HookShape int

// The hook shapes.
const (
	// NoHooks: the agent runs no hook commands.
	NoHooks HookShape = iota
	// HookGroups is Claude Code's settings shape: {"hooks": {"Event": [{"matcher", "hooks":
	// [{"type": "command", "command", "timeout"}]}]}}.
	HookGroups
	// HookList is Cursor's: {"hooks": {"event": [{"command", "timeout"}]}}.
	HookList
	// HookTypedList is VS Code's: {"hooks": {"Event": [{"type": "command", "command", "timeout"}]}}.
	HookTypedList
	// HookScripts is Cline's: an executable file per event, named after it, in a folder.
	HookScripts
	// HookExtension is pi's and opencode's: an extension (plugin) file the agent loads, which
	// speaks to replay serve, with tasklog.json beside it.
	HookExtension
)

// HookConfig says where an agent reads its hook commands and in what shape.
type HookConfig struct {
	// Shape is how the configuration holds them.
	Shape HookShape
	// Project is the file (or folder, for HookScripts and HookExtension) under a project
	// folder, slash-separated.
	Project string
	// User is the same under the home folder; "" when the agent has no user hooks, and NoUser
	// says why.
	User   string
	NoUser string
	// UserDirEnv names an environment variable that, when set, holds the folder standing for
	// UserDir, the leading folders of User ($CODEX_HOME for ".codex").
	UserDirEnv, UserDir string
	// Extension is the file name a HookExtension's source is written as in the Project or User
	// folder: "" for index.ts in a folder of its own (pi's), else a file beside the agent's other
	// plugins (opencode's tasklog.ts), whose folder uninstall never removes unless install made it.
	Extension string
	// Version is the "version" a new document gets (Cursor requires one); 0 writes none.
	Version int
	// HTTP marks an agent whose hooks may be HTTP posts to loopback ({"type": "http", "url",
	// "headers"} in HookGroups): 'replay install --http' points them at 'replay serve --http'.
	HTTP bool
	// Events are the events subscribed to, in the order they are written.
	Events []HookEvent
}

// HookEvent is one event an agent runs hooks for.
type HookEvent struct {
	Name string
	// Matcher marks an event that filters on a matcher: install writes "*" (all).
	Matcher bool
	// Timeout is the hook's budget in the agent's unit: seconds, Gemini CLI's milliseconds; 0
	// writes none.
	Timeout int
}

// MCPFormat is how an agent's settings hold its MCP servers.
type MCPFormat int

// The MCP settings formats.
const (
	// NoMCP: the agent has no MCP client.
	NoMCP MCPFormat = iota
	// MCPJSON is a JSON document with the servers under a key ("mcpServers", "servers").
	MCPJSON
	// MCPTOML is Codex's config.toml, [mcp_servers.NAME] tables.
	MCPTOML
)

// MCPEntry is the shape of one server entry in a JSON settings document.
type MCPEntry int

// The MCP server entry shapes.
const (
	// MCPCommand is {"command", "args"}.
	MCPCommand MCPEntry = iota
	// MCPTypedStdio is VS Code's {"type": "stdio", "command", "args"}.
	MCPTypedStdio
	// MCPEnabled is Cline's {"command", "args", "disabled": false}.
	MCPEnabled
)

// MCPConfig says where an agent reads its MCP servers and in what shape.
type MCPConfig struct {
	// Format is how the settings hold servers; NoMCP says why in Absent.
	Format MCPFormat
	Absent string
	// Key is the JSON object the servers are kept under.
	Key string
	// Entry is the shape of a server entry.
	Entry MCPEntry
	// Project is the settings file under a project folder; "" when the agent reads MCP servers
	// per user only, and NoProject says why.
	Project   string
	NoProject string
	// User is the settings file under the home folder; "" when the agent has no user file of
	// its own, and NoUser says why.
	User   string
	NoUser string
	// UserDirEnv and UserDir: as in HookConfig.
	UserDirEnv, UserDir string
	// UserFile, when set, is the user settings file the agent's environment (getenv) chooses
	// instead of User, absolute; "" for User.
	UserFile func(getenv func(string) string) string
	// AlsoUser are further user settings files (under the home folder) written only where the
	// folder holding them, Folder, exists: another build of the agent installed beside.
	AlsoUser []OptionalFile
}

// OptionalFile is a settings file written only where Folder exists.
type OptionalFile struct {
	Folder, File string
}

// registry holds the dialects, in Order.
var registry []*Dialect

// Register adds a dialect to Dialects; each agent's file calls it once, at initialisation. It
// panics on a second dialect of the same name, as a programming error.
func Register(d *Dialect) *Dialect {
	for _, o := range registry {
		if o.Agent == d.Agent {
			panic(fmt.Sprintf("agentlog: dialect %s registered twice", d.Agent))
		}
	}
	d.Payload.Agent = string(d.Agent)
	registry = append(registry, d)
	sort.SliceStable(registry, func(i, j int) bool { return registry[i].Order < registry[j].Order })
	hookSpecs, orderedSpecs = nil, nil
	for _, d := range registry {
		if d.Parse != nil {
			hookSpecs = append(hookSpecs, d.Payload)
		}
	}
	orderedSpecs = hookspec.Ordered(hookSpecs)
	return d
}

// hookSpecs are the payload specs of the dialects with command hooks, in Order; orderedSpecs
// the same in detection order.
var hookSpecs, orderedSpecs []hookspec.Spec

// Dialects lists every agent tasklog installs into, in Order.
func Dialects() []*Dialect { return append([]*Dialect(nil), registry...) }

// HookSpecs lists the payload specs of the agents with command hooks, in Order: what the hook
// program, which does not link this package, needs to know of them.
func HookSpecs() []hookspec.Spec { return append([]hookspec.Spec(nil), hookSpecs...) }

// DialectOf returns the dialect of agent, or nil.
func DialectOf(agent Agent) *Dialect {
	for _, d := range registry {
		if d.Agent == agent {
			return d
		}
	}
	return nil
}

// HookAgents lists the agents whose hook payloads ParseHook reads, in Order.
func HookAgents() []Agent {
	var out []Agent
	for _, d := range registry {
		if d.Parse != nil {
			out = append(out, d.Agent)
		}
	}
	return out
}

// ParseHookAgent returns the hook agent named s, or ErrUnknownAgent.
func ParseHookAgent(s string) (Agent, error) {
	names := make([]string, 0, len(registry))
	for _, a := range HookAgents() {
		if string(a) == s {
			return a, nil
		}
		names = append(names, string(a))
	}
	return "", fmt.Errorf("%w %q (want one of %s)", ErrUnknownAgent, s, strings.Join(names, ", "))
}

// detectHook recognises the dialect of a payload (hookspec.Detect over every dialect's clues).
func detectHook(hint Agent, v any) Agent {
	return Agent(hookspec.Detect(orderedSpecs, string(hint), obj(v)))
}

// NeutralReply is the answer that changes nothing, in agent's dialect, for event; nil when the
// dialect wants no output at all.
func NeutralReply(agent Agent, event string) []byte {
	if d := DialectOf(agent); d != nil {
		return d.Payload.NeutralReply(event)
	}
	return nil
}

// LoadsNatively reports whether agent's own loader puts a rule in front of the model, so
// tasklog must not deliver it: source is the rule's source, path its display path
// (root-relative, "~/…" for global rules). Each agent's Dialect.LoadsItself says which.
func LoadsNatively(agent Agent, source events.RuleSource, path string) bool {
	d := DialectOf(agent)
	return d != nil && d.LoadsItself != nil && d.LoadsItself(source, path)
}

// rootAgents reports whether a rule is the AGENTS.md at a root: the one every agent that reads
// AGENTS.md at all loads.
func rootAgents(source events.RuleSource, path string) bool {
	return source == events.RuleSourceAgents && path == "AGENTS.md"
}

// codexAgents reports whether a rule is an AGENTS.md Codex loads: the root's, and the user's
// global one (~/.codex/AGENTS.md), which no other agent reads.
func codexAgents(source events.RuleSource, path string) bool {
	return rootAgents(source, path) || source == events.RuleSourceAgents && strings.HasPrefix(path, "~/")
}
