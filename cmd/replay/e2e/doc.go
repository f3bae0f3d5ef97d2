// Package e2e drives the real agent programs (Claude Code, Codex, Cline, Gemini CLI, Qwen Code,
// Copilot CLI, opencode and pi, installed from npm by .ci/install-agents) against a fake model,
// with tasklog's hooks installed as 'replay install' writes them. Its tests skip, with one line
// each, when an agent is not installed. It holds tests only; it is a package of its own so that
// these long runs have go test's default ten minutes apart from the command's other tests.
package e2e
