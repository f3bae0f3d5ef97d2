package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// momentFlags select one decision: --turn N, or --prompt N (its last request) with an
// optional --request M.
type momentFlags struct {
	turn, prompt, request int
	promptSet             bool
}

func (m *momentFlags) register(f *flags) {
	f.IntVar(&m.turn, "turn", 0, "the decision to explain, by its ordinal in the task (1 is the first request)")
	f.Func("prompt", "the prompt (user message) to explain, at its last request; 0 is before the first prompt", func(v string) error {
		_, err := fmt.Sscan(v, &m.prompt)
		if err == nil && m.prompt < 0 {
			err = errors.New("a prompt is 0 or more")
		}
		m.promptSet = err == nil
		return err
	})
	f.IntVar(&m.request, "request", 0, "with --prompt: the request of that prompt (1 is its first)")
}

// check reports a usage error: exactly one of --turn and --prompt is needed.
func (m *momentFlags) check(verb string, stderr io.Writer) int {
	switch {
	case m.request < 0 || m.request > 0 && !m.promptSet:
		fmt.Fprintf(stderr, "replay %s: --request M goes with --prompt N (M ≥ 1)\n", verb)
	case m.promptSet && m.turn != 0:
		fmt.Fprintf(stderr, "replay %s: give --prompt N or --turn N, not both\n", verb)
	case !m.promptSet && m.turn < 1:
		fmt.Fprintf(stderr, "replay %s: --prompt N or --turn N is required (turn N ≥ 1)\n", verb)
	default:
		return -1
	}
	return exitUsage
}

// resolve is the turn the flags select; a prompt or request the task does not have is a usage
// error naming those it has.
func (m *momentFlags) resolve(ctx context.Context, verb string, db store.Store, task uuid.UUID, stderr io.Writer) (int, int) {
	if !m.promptSet {
		return m.turn, -1
	}
	reqs, err := session.RequestsOf(ctx, db, task)
	if err != nil {
		return 0, fail(stderr, err)
	}
	p := session.Position{Prompt: m.prompt, Request: m.request}
	if t, ok := reqs.Turn(p); ok {
		return t, -1
	}
	what := fmt.Sprintf("prompt %d", m.prompt)
	if m.request > 0 {
		what = p.String()
	}
	fmt.Fprintf(stderr, "replay %s: task %s has no decision at %s; %s\n", verb, task, what, reqs.Describe())
	return 0, exitUsage
}
