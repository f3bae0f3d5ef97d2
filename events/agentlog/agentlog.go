// Package agentlog turns the session files coding agents leave on disk into tasklog events, so
// rules can be audited against real history.
//
// Four agents are understood: Cline (a task folder holding ui_messages.json, with
// api_conversation_history.json and task_metadata.json beside it), Claude Code (a transcript
// .jsonl), pi (a session .jsonl) and Codex CLI (a rollout .jsonl). Import streams one of them and
// hands the caller, in order, the events to record and the turn boundaries where the agent built a
// prompt; the caller assigns task, ids, sequence and turn numbers and records a decision at each
// boundary.
//
// Every event carries its Origin (the file as given and the zero-based record index) and the
// record's own timestamp. Paths are resolved against the working directory of the turn they
// occur in and emitted as absolute paths in the original machine's namespace (POSIX form, with an
// upper-case drive letter for Windows, "C:/Users/x/…"); the spelling the agent wrote stays in the
// mention or the tool parameters. Records that map to no event are counted by kind in the Report.
package agentlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tasklog/tasklog/events"
)

// Agent names an agent whose session files can be imported.
type Agent string

// The agents Import understands.
const (
	Cline      Agent = "cline"
	ClaudeCode Agent = "claude-code"
	Pi         Agent = "pi"
	Codex      Agent = "codex"
)

// Agents lists the importable agents in a fixed order.
func Agents() []Agent { return []Agent{Cline, ClaudeCode, Pi, Codex} }

// ParseAgent returns the agent named s, or ErrUnknownAgent.
func ParseAgent(s string) (Agent, error) {
	for _, a := range Agents() {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("%w %q (want one of cline, claude-code, pi, codex)", ErrUnknownAgent, s)
}

// Sentinel errors callers test with errors.Is.
var (
	// ErrUnknownAgent is returned for an agent name this package does not import.
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrFormat is returned for input that is not a well-formed session file of the agent.
	ErrFormat = errors.New("malformed session file")
)

// DefaultMaxInline is the length above which a string in tool parameters is replaced by a
// digest, unless Options.KeepContent is set.
const DefaultMaxInline = 1024

// Options tune an import. The zero value is the default.
type Options struct {
	// KeepContent keeps large strings (file contents, patches, images) in tool parameters as they
	// are instead of replacing them by {"omitted": true, "bytes": N, "sha256": "…"}.
	KeepContent bool
	// MaxInline is the longest string kept inline in tool parameters; 0 means DefaultMaxInline.
	MaxInline int
}

func (o Options) maxInline() int {
	if o.MaxInline <= 0 {
		return DefaultMaxInline
	}
	return o.MaxInline
}

// Item is one thing the importer emits, in order: an event to record, or a turn boundary where
// the runtime built a prompt (the caller then records a decision). Exactly one of Event and Turn
// is set.
type Item struct {
	// Event has Type, V, Data, Time and Origin set; Task, ID, Seq and Turn are the caller's.
	Event *events.Event
	// Turn marks a model request: everything emitted before it is the context of that prompt.
	Turn bool
}

// Import reads one session of agent at path and calls emit for every item, in order. For Cline,
// path is a task folder or its ui_messages.json; for the others it is the transcript or rollout
// file. An error from emit stops the import and is returned as is. Errors about the input name
// the file and the record and wrap ErrFormat.
func Import(agent Agent, path string, opts Options, emit func(Item) error) (Report, error) {
	if _, err := ParseAgent(string(agent)); err != nil {
		return Report{Agent: agent}, err
	}
	if agent == Cline {
		return importClinePath(path, opts, emit)
	}
	f, err := os.Open(path)
	if err != nil {
		return Report{Agent: agent}, err
	}
	defer f.Close()
	return importJSONL(agent, path, f, opts, emit)
}

// Detect guesses which agent wrote the session at path: a directory or a file named like Cline's
// task files is Cline; otherwise the first JSON line of the file decides.
func Detect(path string) (Agent, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() || isClineFile(filepath.Base(path)) {
		if _, err := clineFiles(path); err == nil {
			return Cline, nil
		}
		if st.IsDir() {
			return "", fmt.Errorf("%s: %w: no ui_messages.json or api_conversation_history.json", path, ErrFormat)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	first, err := firstLine(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if a, ok := detectLine(first); ok {
		return a, nil
	}
	return "", fmt.Errorf("%s: %w: first line is not a Claude Code, pi or Codex record", path, ErrFormat)
}

// Discover lists the importable units of agent under dir, sorted: Cline task folders (a folder
// holding ui_messages.json or api_conversation_history.json, or a ui_messages.json whose name
// carries a prefix), or the .jsonl files of the other agents. Claude Code subagent transcripts
// (under a subagents folder, or named agent-*.jsonl) are left out: they belong to their parent;
// DiscoverAll names them.
func Discover(agent Agent, dir string) ([]string, error) {
	units, _, err := DiscoverAll(agent, dir)
	return units, err
}

// SkippedFile is a session file under a folder that Discover leaves out, and why.
type SkippedFile struct {
	// File is the path of the file.
	File string `json:"file"`
	// Reason says why it is not imported on its own.
	Reason string `json:"reason"`
	// Parent is the session file it belongs to, when known.
	Parent string `json:"parent,omitempty"`
}

// DiscoverAll is Discover that also returns the files it leaves out, sorted: Claude Code
// sub-agent (sidechain) transcripts, each with the parent session it belongs to when that file is
// found (the folder <session>/subagents/ sits beside <session>.jsonl; an agent-*.jsonl names its
// parent in its sessionId).
func DiscoverAll(agent Agent, dir string) ([]string, []SkippedFile, error) {
	if _, err := ParseAgent(string(agent)); err != nil {
		return nil, nil, err
	}
	var out []string
	var skipped []SkippedFile
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		switch agent {
		case Cline:
			if strings.HasSuffix(name, clineUI) || (strings.HasSuffix(name, clineAPI) && !exists(strings.TrimSuffix(p, clineAPI)+clineUI)) {
				if name == clineUI || name == clineAPI {
					out = append(out, filepath.Dir(p))
				} else {
					out = append(out, p)
				}
			}
		default:
			if !strings.HasSuffix(name, ".jsonl") {
				return nil
			}
			if agent == ClaudeCode && (strings.HasPrefix(name, "agent-") || filepath.Base(filepath.Dir(p)) == "subagents") {
				skipped = append(skipped, SkippedFile{File: p, Reason: "sub-agent transcript (sidechain)",
					Parent: claudeParent(p)})
				return nil
			}
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].File < skipped[j].File })
	return out, skipped, err
}

// claudeParent finds the session file a sub-agent transcript belongs to, or "".
func claudeParent(p string) string {
	if dir := filepath.Dir(p); filepath.Base(dir) == "subagents" {
		session := filepath.Dir(dir)
		if parent := session + ".jsonl"; exists(parent) {
			return parent
		}
	}
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	first, err := firstLine(f)
	if err != nil {
		return ""
	}
	v, err := decodeLine(first)
	if err != nil {
		return ""
	}
	if id := gets(v, "sessionId"); id != "" && !strings.ContainsAny(id, `/\`) {
		for _, dir := range []string{filepath.Dir(p), filepath.Dir(filepath.Dir(p)), filepath.Dir(filepath.Dir(filepath.Dir(p)))} {
			if parent := filepath.Join(dir, id+".jsonl"); exists(parent) && parent != p {
				return parent
			}
		}
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
