// Package rules discovers, parses and evaluates the rule files of today's coding agents
// (tasklog's own folder, Cline, Cursor, Windsurf, Claude Code, GitHub Copilot and AGENTS.md)
// and decides, with a reason for every rule, which of them apply to a request.
//
// Discovery is the only I/O: [Collect] reads a [Workspace] into a sorted list of [File]
// values, which a caller can snapshot. Everything after it is pure and deterministic:
// [Load] parses and normalizes files into a [RuleSet] (one [Rule] per file, each with its
// diagnostics), and [RuleSet.Evaluate] decides every rule against an [EvaluationContext].
// The same files and context always give the same [Decision], byte for byte.
//
// A malformed rule never disappears: it is kept, fail-open, with a [Diagnostic] saying what
// was wrong, or, where it cannot be used at all (a binary file, an empty body), reported with
// an explicit reason.
//
// Each provider's keys are read as its own tool reads them: Cursor's alwaysApply, globs and
// description (Always, Auto Attached, Agent Requested, else Manual); Windsurf's trigger;
// Claude Code's and Cline's paths; Copilot's applyTo; AGENTS.md and CLAUDE.md by their
// folder. A key of another tool is reported, not obeyed, since that tool would ignore it too.
// tasklog's own folder reads every tool's keys. Every provider reads the conditionals mode,
// provider, model and os, and condition (or ttsr_trigger) for stream-triggered rules.
//
// Rules are named by their path inside their rules folder, without the extension (the file
// stem for top-level files); rules of one name shadow each other by precedence: an always
// enabled remote rule, then tasklog, Cursor, Windsurf, Claude Code, Cline, Copilot, AGENTS.md,
// and within a provider workspace over global over remote; memory files (CLAUDE.md,
// AGENTS.md) are never shadowed and shadow nothing. A toggle does not bring a shadowed rule
// back. Files over [MaxFileSize] are kept truncated, with a diagnostic.
package rules

// EngineVersion names the evaluation semantics of this package. It is recorded in every
// [Decision] and changes whenever the same files and context could decide differently. A
// decision recorded under an earlier version is decided again as that version decided
// ([RuleSet.EvaluateLentAs]), so that a log replays as it was written:
//
//   - rules/1: the first.
//   - rules/2: a manual rule whose own file the context holds as mentioned is included
//     ([MatchMentioned]), an excluded manual rule's detail says so, and a frontmatter key
//     given twice is a [DiagDuplicateKey] diagnostic.
//   - rules/3: a legacy .clinerules file (a file, not the folder) is read as a file of the
//     .clinerules folder is, as Cline reads it: its frontmatter's paths scope it, and its body
//     is what follows the --- block. Before, it was sent as written, always on. And a
//     CLAUDE.md or AGENTS.md in .claude/rules is a rule of that folder, as Claude Code reads
//     every file there; before, it was a memory file scoped to .claude/rules. And memory
//     files (CLAUDE.md, AGENTS.md) shadow nothing and are shadowed by nothing, as the agents
//     that read them read each one; before, they were shadowed by name like other rules. A
//     name they share is the other rule's, and an on-request rule's detail gives the rule's
//     address ([Rule.Address]: rule://ID where the name is another's).
//   - rules/4: the root's CLAUDE.local.md is a memory file, as Claude Code loads it beside
//     CLAUDE.md; no earlier version collected it (read as they would, it is a rule file). And
//     a Cline file is read as Cline reads it: its block found by Cline's fence pattern, and
//     always on with the whole file as its body when js-yaml rejects the block (an unquoted *
//     that YAML reads as an alias, a tab in the indentation, a key given twice, a second
//     document). Before, its block was read line by line, as Cursor and Windsurf read theirs,
//     and its paths scoped it (a key given twice: the first).
const EngineVersion = "rules/4"

// EngineV1 is the first engine version, whose decisions later versions decide again as they
// were.
const EngineV1 = "rules/1"

// EngineV2 is the second engine version, whose decisions later versions decide again as they
// were.
const EngineV2 = "rules/2"

// EngineV3 is the third engine version, whose decisions later versions decide again as they
// were.
const EngineV3 = "rules/3"
