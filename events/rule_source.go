package events

// RuleSource is the family a rule file belongs to: whose convention it follows (Claude Code's
// .claude/rules, Cursor's .cursor/rules, AGENTS.md, …). It is recorded with every rule (as
// "provider") and names the rules an agent loads by itself.
type RuleSource string

// The rule sources.
const (
	RuleSourceTasklog  RuleSource = "tasklog"
	RuleSourceCline    RuleSource = "cline"
	RuleSourceCursor   RuleSource = "cursor"
	RuleSourceWindsurf RuleSource = "windsurf"
	RuleSourceClaude   RuleSource = "claude"
	RuleSourceCopilot  RuleSource = "copilot"
	RuleSourceAgents   RuleSource = "agents"
	RuleSourceImport   RuleSource = "import"
)
