package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

const (
	// mcpTimelineDefault and mcpTimelineMax bound how many turns one timeline page holds.
	mcpTimelineDefault = 20
	mcpTimelineMax     = 100
	// mcpTimelineLine is the most runes one turn's line holds.
	mcpTimelineLine = 320
	// mcpTimelineCalls is how many tool calls a line names before it only counts them.
	mcpTimelineCalls = 3
)

type mcpTimelineIn struct {
	Last   int    `json:"last,omitempty" jsonschema:"how many turns (default 20, at most 100)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of an earlier answer: the turns before those it held"`
	Task   string `json:"task,omitempty" jsonschema:"a task id or unique prefix (default: the current task)"`
}

// mcpTimelineTurn is one turn in one line.
type mcpTimelineTurn struct {
	Turn     int    `json:"turn"`
	Prompt   int    `json:"prompt" jsonschema:"the prompt (user message) the turn's request serves; 0 before the first"`
	Request  int    `json:"request" jsonschema:"the turn's model request within its prompt, from 1"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Line     string `json:"line"`
}

type mcpTimelineOut struct {
	Task       string            `json:"task"`
	Turns      int               `json:"turns" jsonschema:"how many turns the task has"`
	Lines      []mcpTimelineTurn `json:"lines" jsonschema:"the turns of this page, oldest first"`
	NextCursor string            `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the turns before these"`
}

func (s *mcpServer) timeline(ctx context.Context, _ *mcp.CallToolRequest, in mcpTimelineIn) (*mcp.CallToolResult, mcpTimelineOut, error) {
	var out mcpTimelineOut
	last := in.Last
	switch {
	case last == 0:
		last = mcpTimelineDefault
	case last < 0 || last > mcpTimelineMax:
		return nil, out, fmt.Errorf("last: %d; give 1 to %d", last, mcpTimelineMax)
	}
	err := s.withDB(func(db store.Store) error {
		task, err := s.taskFor(db, in.Task)
		if err != nil {
			return err
		}
		out.Task = task.String()
		turns, err := mcpTaskTurns(ctx, db, task)
		if err != nil {
			return err
		}
		out.Turns = len(turns)
		end := len(turns) // the page ends before turns[end]
		if in.Cursor != "" {
			if end, err = mcpTimelineCursorEnd(in.Cursor, task, len(turns)); err != nil {
				return err
			}
		}
		start := max(0, end-last)
		out.Lines = []mcpTimelineTurn{}
		for _, t := range turns[start:end] {
			out.Lines = append(out.Lines, t.line())
		}
		if start > 0 {
			out.NextCursor = mcpTimelineCursor(task, turns[start].turn)
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
	return mcpTextResult(b.String()), out, nil
}

// mcpTimelineCursor points before a turn of a task; it names the task so that it is not taken for
// another's.
func mcpTimelineCursor(task uuid.UUID, before int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(task.String() + ":" + strconv.Itoa(before)))
}

// mcpTimelineCursorEnd is the index of the turn a cursor points before.
func mcpTimelineCursorEnd(cursor string, task uuid.UUID, n int) (int, error) {
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

// mcpTurnSummary gathers what one turn's events did.
type mcpTurnSummary struct {
	turn        int
	pos         session.Position
	first, last uint64
	prompts     []string
	calls       []string
	ncalls      int
	writes      []string
	rules       []string
	decided     bool
	other       []string // other event types, in order of first appearance
	counts      map[string]int
}

// mcpTaskTurns reads a task's log into one summary per turn, in order.
func mcpTaskTurns(ctx context.Context, db store.Store, task uuid.UUID) ([]*mcpTurnSummary, error) {
	var turns []*mcpTurnSummary
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return nil, err
		}
		if len(turns) == 0 || turns[len(turns)-1].turn != ev.Turn {
			turns = append(turns, &mcpTurnSummary{turn: ev.Turn, first: ev.Seq, counts: map[string]int{}})
		}
		turns[len(turns)-1].add(ev)
	}
	recs, err := session.Decisions(ctx, db, task)
	if err != nil {
		return nil, err
	}
	reqs := &session.Requests{}
	if len(recs) > 0 {
		reqs = recs[0].Requests
	}
	for _, t := range turns {
		t.pos = reqs.At(t.turn)
	}
	i := 0
	for _, rec := range recs {
		for i < len(turns) && turns[i].turn < rec.Decision.Turn {
			i++
		}
		if i < len(turns) && turns[i].turn == rec.Decision.Turn {
			for _, o := range rec.Decision.Included {
				turns[i].rules = append(turns[i].rules, o.Name)
			}
		}
	}
	return turns, nil
}

func (t *mcpTurnSummary) add(ev events.Event) {
	t.last = ev.Seq
	switch ev.Type {
	case events.TypeUserMessage:
		t.prompts = append(t.prompts, events.Summary(ev))
	case events.TypeToolCall:
		t.ncalls++
		if len(t.calls) < mcpTimelineCalls {
			t.calls = append(t.calls, events.Summary(ev))
		}
	case events.TypeFileWrite:
		t.writes = append(t.writes, events.Summary(ev))
	case events.TypeDecision:
		t.decided = true
	case events.TypeTaskStarted, events.TypeRulesSnapshot:
	default:
		if t.counts[string(ev.Type)] == 0 {
			t.other = append(t.other, string(ev.Type))
		}
		t.counts[string(ev.Type)]++
	}
}

// line is the turn in one line: prompt, the rules decided, tool calls, writes, the rest counted.
func (t *mcpTurnSummary) line() mcpTimelineTurn {
	parts := []string{fmt.Sprintf("turn %d (%s)", t.turn, t.pos)}
	if len(t.prompts) > 0 {
		parts = append(parts, strings.Join(t.prompts, " / "))
	}
	switch {
	case !t.decided:
		parts = append(parts, "no decision yet")
	case len(t.rules) == 0:
		parts = append(parts, "rules: none")
	default:
		parts = append(parts, "rules: "+strings.Join(t.rules, ", "))
	}
	if t.ncalls > 0 {
		calls := strings.Join(t.calls, "; ")
		if t.ncalls > len(t.calls) {
			calls += fmt.Sprintf("; %d more", t.ncalls-len(t.calls))
		}
		parts = append(parts, fmt.Sprintf("%d tool calls: %s", t.ncalls, calls))
	}
	if len(t.writes) > 0 {
		parts = append(parts, "wrote "+strings.Join(t.writes, ", "))
	}
	for _, typ := range t.other {
		parts = append(parts, fmt.Sprintf("%s×%d", typ, t.counts[typ]))
	}
	line := strings.Join(parts, " · ")
	if utf8.RuneCountInString(line) > mcpTimelineLine {
		r := []rune(line)
		line = string(r[:mcpTimelineLine-1]) + "…"
	}
	return mcpTimelineTurn{Turn: t.turn, Prompt: t.pos.Prompt, Request: t.pos.Request, FirstSeq: t.first, LastSeq: t.last, Line: line}
}
