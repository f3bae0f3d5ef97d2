package rules

import (
	"cmp"
	"fmt"
)

// Severity grades a diagnostic.
type Severity string

// The severities.
const (
	// SeverityError: the file could not be read as its author meant; it was kept fail-open
	// or reported as unusable.
	SeverityError Severity = "error"
	// SeverityWarning: part of the file was ignored or read leniently.
	SeverityWarning Severity = "warning"
	// SeverityInfo: worth knowing, nothing was lost.
	SeverityInfo Severity = "info"
)

// Diagnostic codes. They are stable: tests and tools match on them.
const (
	DiagParseError   = "parse_error"     // frontmatter is not YAML; rule kept universal with the raw file as body
	DiagNotStrict    = "not_strict_yaml" // frontmatter is not strict YAML but was read line by line, as Cursor does
	DiagUnquotedStar = "unquoted_star"   // an unquoted * broke the YAML (it starts an alias)
	DiagNotMapping   = "not_mapping"     // frontmatter is YAML but not a mapping
	DiagYAMLLimits   = "yaml_limits"     // too many aliases, nodes or too deep
	DiagYAMLTag      = "yaml_tag"        // a non-standard YAML tag; the value was read as plain text
	DiagNoDelimiters = "no_delimiters"   // the file starts with key: value lines but has no --- fences
	DiagUnknownKey   = "unknown_key"     // a key no evaluator reads
	DiagForeignKey   = "foreign_key"     // a key of another tool, not read by this tool
	DiagWrongType    = "wrong_type"      // a key's value has the wrong type; the key is ignored
	DiagCommaString  = "comma_string"    // a pattern list given as one comma-separated string
	DiagEmptyList    = "empty_list"      // an empty list: the condition can never hold
	DiagEmptyPattern = "empty_pattern"   // an empty pattern was dropped
	DiagNeverMatches = "never_matches"   // a pattern that can never match (absolute, ..)
	DiagBadGlob      = "invalid_glob"    // a pattern that does not parse; only literal equality can match it
	DiagUnsupported  = "unsupported_glob"
	DiagPatternLimit = "pattern_limit" // a pattern too long, too deeply nested or expanding too far; it never matches
	DiagNegated      = "negated_glob"  // a leading ! negates the whole pattern
	DiagWindowsPath  = "windows_path"  // a backslash in a pattern escapes; it is not a separator
	DiagBadTrigger   = "bad_trigger"   // an unknown Windsurf trigger
	DiagBadRegexp    = "bad_regexp"    // a stream condition that does not compile
	DiagEmptyBody    = "empty_body"
	DiagTooLarge     = "too_large"
	DiagBinary       = "binary"
	DiagInvalidUTF8  = "invalid_utf8"
	DiagReadError    = "read_error"
	DiagWalkLimit    = "walk_limit"
	DiagNotRegular   = "not_regular" // a named pipe, socket or device where a rule file was looked for; not read
	DiagLinkLoop     = "link_loop"   // a link to a folder the walk has read (a loop, or a second way in); not followed
	DiagDuplicateID  = "duplicate_id"
	DiagManualOnly   = "manual_only"   // no metadata that applies it automatically in its tool
	DiagIgnoredKey   = "ignored_key"   // a known key made irrelevant by another (globs under alwaysApply)
	DiagDuplicateKey = "duplicate_key" // a top-level key given again; the first is read
	// DiagLegacyFrontmatter: a legacy single file (.cursorrules, .windsurfrules, and a
	// .clinerules file as engines before rules/3 read it) opens with a --- block; its tool sends
	// it as written, so the keys are not read and the block stays in the body.
	DiagLegacyFrontmatter = "legacy_frontmatter"
	// DiagMemorySkipped: an AGENTS.md or CLAUDE.md in a folder the search does not enter
	// (dependencies, build output, version control, a tool's own folder); not read.
	DiagMemorySkipped = "memory_skipped"
	DiagImportMissing = "import_missing" // an @path import names no file that was read; the token stays as written
	DiagImportCycle   = "import_cycle"   // an @path import leads back to a file being expanded
	DiagImportDepth   = "import_depth"   // an @path import more than MaxImportDepth hops away
	// DiagOutsideRoot: a rule file, rules folder or import whose real path, links resolved,
	// leaves the workspace root (the home folder, for the user's own rules); not read.
	DiagOutsideRoot = "outside_root"
)

// Diagnostic is one anomaly found in a rule file.
type Diagnostic struct {
	// RuleID is the rule the diagnostic belongs to.
	RuleID string `json:"rule_id,omitempty"`
	// File is the file as a person would look for it (root-joined path, ~/path, remote:name).
	File string `json:"file"`
	// Line is the 1-based line in the file, or 0 when unknown.
	Line int `json:"line,omitempty"`
	// Severity grades the anomaly.
	Severity Severity `json:"severity"`
	// Code is a stable machine code: one of the Diag constants.
	Code string `json:"code"`
	// Message says what was wrong and what was done about it.
	Message string `json:"message"`
}

// String formats the diagnostic as file:line: severity: message [code].
func (d Diagnostic) String() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s [%s]", d.File, d.Line, d.Severity, d.Message, d.Code)
	}
	return fmt.Sprintf("%s: %s: %s [%s]", d.File, d.Severity, d.Message, d.Code)
}

func compareDiagnostics(a, b Diagnostic) int {
	return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Code, b.Code), cmp.Compare(a.Message, b.Message), cmp.Compare(a.RuleID, b.RuleID))
}
