package rules

import (
	"regexp"
	"strings"
)

// Category says how a rule reaches the model.
type Category string

// The rule categories.
const (
	// CategoryAlways rules are included in every prompt.
	CategoryAlways Category = "always"
	// CategoryScoped rules are included when a candidate path matches one of their patterns.
	CategoryScoped Category = "scoped"
	// CategoryOnRequest rules are listed by name and description; the model reads the body
	// through rule://<name> when it decides the rule is relevant.
	CategoryOnRequest Category = "on_request"
	// CategoryManual rules are included only when the user mentions them by name.
	CategoryManual Category = "manual"
	// CategoryStream rules are never in the prompt: they are registered as stream triggers
	// that fire when the model's output matches their regular expression.
	CategoryStream Category = "stream_triggered"
)

// Scopes, as recorded in [File.Scope].
const (
	ScopeWorkspace = "workspace"
	ScopeGlobal    = "global"
	ScopeRemote    = "remote"
)

// Rule is one rule file, normalized. A Rule is immutable once [Load] returns it.
type Rule struct {
	// ID is unique within a rule set and stable across runs: provider, scope and path.
	ID string `json:"id"`
	// Name is the rule's path inside its rules folder without the extension (the file stem
	// for top-level files). Rules of the same name shadow each other; rule://<name> resolves it.
	Name string `json:"name"`
	// Provider is the tool whose folder the rule came from (one of the Provider constants).
	Provider Provider `json:"provider"`
	// Scope is "workspace", "global" or "remote".
	Scope string `json:"scope"`
	// Root is the workspace root the file was found in; empty for global and remote rules.
	Root string `json:"root,omitempty"`
	// Path is the file's POSIX path relative to its root or home folder (remote: the name).
	Path string `json:"path"`
	// DisplayPath is how the rule is labelled in the prompt: Path for workspace rules,
	// "~/"+Path for global rules, the name for remote rules.
	DisplayPath string `json:"display_path"`
	// Body is the text that goes into the prompt: the file without its frontmatter, trimmed.
	Body string `json:"-"`
	// Description is the frontmatter description, if any.
	Description string `json:"description,omitempty"`
	// Category says how the rule reaches the model.
	Category Category `json:"category"`
	// Conditions are AND-ed; a rule without conditions is unconditional.
	Conditions []Condition `json:"conditions,omitempty"`
	// Trigger is set for stream-triggered rules.
	Trigger *Trigger `json:"trigger,omitempty"`
	// AlwaysEnabled marks a remote rule that toggles cannot disable.
	AlwaysEnabled bool `json:"always_enabled,omitempty"`
	// Unusable is set when the rule can never be included ("binary", "empty"); such a rule
	// does not take part in shadowing, so it cannot hide a usable rule of the same name.
	Unusable string `json:"unusable,omitempty"`
	// ShadowedBy is the ID of the higher-precedence rule of the same name, if any.
	ShadowedBy string `json:"shadowed_by,omitempty"`
	// Diagnostics lists everything odd about the file, in file order.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// ContentHash is the hex SHA-256 of the file's content as recorded.
	ContentHash string `json:"content_hash"`
	// Imports are the files whose text the body took in through @path imports, in the order
	// met (see [ProviderImport]).
	Imports []string `json:"imports,omitempty"`

	precedence int
	shadowKey  string // Name, plus the root for a subfolder's AGENTS.md/CLAUDE.md (scoped by place, not name)
	address    string // see Address
}

// Address is the rule:// URI that reaches the rule: rule://NAME when its name resolves to it,
// rule://ID otherwise (a shadowed or unusable rule, a memory file whose name another rule
// holds), with what a URI may not hold percent-encoded. A rule read as the engines before
// rules/3 read it gives rule://NAME, as they did.
func (r *Rule) Address() string {
	if r.address == "" {
		return RuleURIScheme + r.Name
	}
	return r.address
}

// RuleURI is rule://key, key a rule's name or id, with what a URI may not hold percent-encoded;
// a plain name stays as the prompt spells it.
func RuleURI(key string) string {
	const keep = "-._~/:@!$&'()*+,;="
	var b strings.Builder
	b.Grow(len(RuleURIScheme) + len(key)) // one allocation, unless a byte is escaped
	b.WriteString(RuleURIScheme)
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// PathConditions returns the rule's paths conditions, in order: every one must hold. A rule of
// a nested folder has its folder's (From is FromLocation) and its own.
func (r *Rule) PathConditions() []Condition {
	var out []Condition
	for _, c := range r.Conditions {
		if c.Key == CondPaths {
			out = append(out, c)
		}
	}
	return out
}

// Patterns returns the raw patterns of the rule's path condition, if it has one: the
// nearest-miss information for a scoped rule that was not included.
func (r *Rule) Patterns() []string {
	for i := range r.Conditions {
		if r.Conditions[i].Key == CondPaths {
			return r.Conditions[i].Values
		}
	}
	return nil
}

// FromLocation is the From of a paths condition a rule has by where its file is, not by what it
// says: its paths must lie in the folder that holds it.
const FromLocation = "location"

// Condition is one AND-ed requirement of a rule.
type Condition struct {
	// Key is the evaluator's name: one of the Cond constants.
	Key string `json:"key"`
	// From is the frontmatter key the condition was read from ("globs", "applyTo", ...), or
	// FromLocation for the implicit scope of a subfolder's memory file (AGENTS.md, CLAUDE.md)
	// or of a nested .cursor/rules folder's rule.
	From string `json:"from"`
	// Values are the condition's operands as written (patterns, modes, model globs, ...).
	Values []string `json:"values"`
	// Root restricts a location condition to candidate paths of this workspace root.
	Root string `json:"root,omitempty"`

	patterns []*Pattern
	noMatch  string // the detail of a paths condition that held for no candidate
}

// Trigger is a stream-triggered rule's registration.
type Trigger struct {
	// RuleID identifies the rule.
	RuleID string `json:"rule_id"`
	// Name is the rule's name.
	Name string `json:"name"`
	// Pattern is the compiled condition; it marshals to the expression as written.
	Pattern *regexp.Regexp `json:"pattern"`
	// Scope restricts the stream the trigger watches: "text", "thinking", "tool", or "" (any).
	Scope string `json:"scope,omitempty"`
	// Once asks the runtime to fire the trigger at most once per task; it is the default, and
	// a rule's "once: false" turns it off.
	Once bool `json:"once,omitempty"`
}

// memoryKey leads the shadow key of a memory file (CLAUDE.md, AGENTS.md) read as shadowing
// nothing: a name never starts with it.
const memoryKey = "\x00"

// isMemory reports whether the rule is a memory file that shadows nothing (rules/3 on).
func (r *Rule) isMemory() bool { return strings.HasPrefix(r.shadowKey, memoryKey) }
