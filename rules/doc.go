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
package rules

// EngineVersion names the evaluation semantics of this package. It is recorded in every
// [Decision] and changes whenever the same files and context could decide differently.
const EngineVersion = "rules/1"
