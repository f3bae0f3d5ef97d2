// Package projections folds a task's log into the state its next decision needs, above all the
// rules.EvaluationContext: the bounded, deduplicated, sorted set of workspace paths the next
// request is about, each with the events that put it there.
//
// The fold is pure: a Task changes only through Apply, reads nothing but the events, and gives
// the same bytes for the same log, whether folded from the start or resumed from a snapshot
// (Marshal, Restore) and the tail after it.
//
// # Evidence
//
// Paths come from six sources, in descending order of confidence:
//
//	mention     resolved @mentions                       the current user turn
//	tool_call   paths a tool call targets                the last ToolTurns turns
//	file_write  files the agent created, edited, deleted the whole task
//	prose       path-like strings in the user's message  the current user turn
//	tab         open tabs and visible editors            the latest tab_snapshot
//	shell       path-like strings in a shell command     the last ToolTurns turns
//
// The current user turn is the latest user_message and the events after it: mentions belong to
// the message they follow, so a runtime records a message's mentions after the message. A
// turn is what the events package says: the turn of the next decision is the number of
// decisions folded, plus one, and tool evidence of turn t counts up to the decision of turn
// t+ToolTurns-1.
//
// Every path is normalized (Normalize) to a root-relative POSIX path under the workspace root
// that contains it; paths that cannot be are counted by reason (Dropped). Each source keeps
// only its newest MaxPaths paths, each path only its newest MaxSources sources, and windows
// expire as turns and user messages pass, so a fold costs O(1) amortized per event and
// building a context costs O(MaxPaths × MaxSources), however long the log.
package projections
