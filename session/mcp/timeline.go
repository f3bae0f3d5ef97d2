package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

const (
	// timelineDefault and timelineMax bound how many turns one timeline page holds.
	timelineDefault = 20
	timelineMax     = 100
	// timelineLine is the most runes one turn's line holds.
	timelineLine = 320
	// timelineCalls is how many tool calls a line names before it only counts them.
	timelineCalls = 3
)

// TimelineIn is the timeline tool's input: how many turns, and from where.
type TimelineIn struct {
	Last   int    `json:"last,omitempty" jsonschema:"how many turns (default 20, at most 100)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier answer: the turns before those it held"`
	Task   string `json:"task,omitempty" jsonschema:"a task id or unique prefix (default: the current task)"`
}

// TimelineTurn is one turn in one line.
type TimelineTurn struct {
	Turn     int    `json:"turn"`
	Prompt   int    `json:"prompt" jsonschema:"the prompt (user message) the turn's request serves; 0 before the first"`
	Request  int    `json:"request" jsonschema:"the turn's model request within its prompt, from 1"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Line     string `json:"line"`
}

// TimelineOut is the timeline tool's answer: a page of turns, a line each.
type TimelineOut struct {
	Task       string         `json:"task"`
	Turns      int            `json:"turns" jsonschema:"how many turns the task has"`
	Lines      []TimelineTurn `json:"lines" jsonschema:"the turns of this page, oldest first"`
	NextCursor string         `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the turns before these"`
}

func (s *server) timeline(ctx context.Context, _ *sdk.CallToolRequest, in TimelineIn) (*sdk.CallToolResult, TimelineOut, error) {
	var out TimelineOut
	last := in.Last
	switch {
	case last == 0:
		last = timelineDefault
	case last < 0 || last > timelineMax:
		return nil, out, fmt.Errorf("last: %d; give 1 to %d", last, timelineMax)
	}
	err := s.withDB(func(db store.Store) error {
		task, err := s.taskFor(db, in.Task)
		if err != nil {
			return err
		}
		out.Task = task.String()
		turns, err := session.Timeline(ctx, db, task)
		if err != nil {
			return err
		}
		out.Turns = len(turns)
		end := len(turns) // the page ends before turns[end]
		if in.Cursor != "" {
			if end, err = timelineCursorEnd(in.Cursor, task, len(turns)); err != nil {
				return err
			}
		}
		start := max(0, end-last)
		out.Lines = []TimelineTurn{}
		for _, t := range turns[start:end] {
			out.Lines = append(out.Lines, turnLine(t))
		}
		if start > 0 {
			out.NextCursor = timelineCursor(task, turns[start].Turn)
		}
		return nil
	})
	if err != nil {
		return nil, out, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "task %s, %d turns", out.Task, out.Turns)
	if len(out.Lines) > 0 {
		fmt.Fprintf(&b, "; turns %d to %d:", out.Lines[0].Turn, out.Lines[len(out.Lines)-1].Turn)
	}
	b.WriteString("\n")
	for _, l := range out.Lines {
		b.WriteString(l.Line + "\n")
	}
	if out.NextCursor != "" {
		fmt.Fprintf(&b, "earlier turns: cursor %s\n", out.NextCursor)
	}
	return textResult(b.String()), out, nil
}

// timelineCursor points before a turn of a task; it names the task so that it is not taken for
// another's.
func timelineCursor(task uuid.UUID, before int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(task.String() + ":" + strconv.Itoa(before)))
}

// timelineCursorEnd is the index of the turn a cursor points before.
func timelineCursorEnd(cursor string, task uuid.UUID, n int) (int, error) {
	bad := fmt.Errorf("cursor %q: not a next_cursor of this task's timeline", cursor)
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, bad
	}
	id, turn, ok := strings.Cut(string(raw), ":")
	before, err := strconv.Atoi(turn)
	if !ok || err != nil || id != task.String() || before < 1 {
		return 0, bad
	}
	return min(before-1, n), nil
}

// turnLine is the turn in one line: prompt, the rules decided, tool calls, writes, the rest
// counted.
func turnLine(t *session.TurnSummary) TimelineTurn {
	parts := []string{fmt.Sprintf("turn %d (%s)", t.Turn, t.Position)}
	if len(t.Prompts) > 0 {
		parts = append(parts, strings.Join(t.Prompts, " / "))
	}
	switch {
	case !t.Decided:
		parts = append(parts, "no decision yet")
	case len(t.Rules) == 0:
		parts = append(parts, "rules: none")
	default:
		parts = append(parts, "rules: "+strings.Join(t.Rules, ", "))
	}
	if n := len(t.Calls); n > 0 {
		shown := t.Calls[:min(n, timelineCalls)]
		calls := strings.Join(shown, "; ")
		if n > len(shown) {
			calls += fmt.Sprintf("; %d more", n-len(shown))
		}
		parts = append(parts, fmt.Sprintf("%d tool calls: %s", n, calls))
	}
	if len(t.Writes) > 0 {
		parts = append(parts, "wrote "+strings.Join(t.Writes, ", "))
	}
	for _, typ := range t.Other {
		parts = append(parts, fmt.Sprintf("%s×%d", typ, t.Counts[typ]))
	}
	line := strings.Join(parts, " · ")
	if utf8.RuneCountInString(line) > timelineLine {
		r := []rune(line)
		line = string(r[:timelineLine-1]) + "…"
	}
	return TimelineTurn{Turn: t.Turn, Prompt: t.Position.Prompt, Request: t.Position.Request, FirstSeq: t.FirstSeq, LastSeq: t.LastSeq, Line: line}
}
