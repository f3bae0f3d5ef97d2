package agentlog

import (
	"fmt"
	"sort"

	"github.com/tasklog/tasklog/events"
)

// Report summarizes an import. Counts are sorted by name so equal imports give equal reports.
type Report struct {
	// Agent is the agent whose files were read.
	Agent Agent `json:"agent"`
	// Files are the files read, as given: the session file first, then any companions.
	Files []string `json:"files"`
	// Records is the number of records of the session file (array elements or lines).
	Records int `json:"records"`
	// Events counts the emitted events by type.
	Events []events.Count `json:"events"`
	// Turns is the number of turn boundaries emitted.
	Turns int `json:"turns"`
	// Skipped counts the records that mapped to no event, by kind ("say:reasoning",
	// "progress", "event_msg:token_count", "duplicate:…", "superseded:…"). Counts from a
	// companion file carry its role as prefix ("api:tool_use_not_executed").
	Skipped []events.Count `json:"skipped,omitempty"`
	// Untimed counts the records without a timestamp; each took the time of the record before
	// it (the Unix epoch when none before it had one).
	Untimed int `json:"untimed,omitempty"`
	// Paths is the number of distinct absolute paths the events name.
	Paths int `json:"paths"`
	// Warnings describe recoverable problems, each naming file and record.
	Warnings []string `json:"warnings,omitempty"`
}

// maxWarnings caps the warnings kept; the rest are counted in a last warning.
const maxWarnings = 100

// tally accumulates a Report while an import runs.
type tally struct {
	agent    Agent
	files    []string
	records  int
	untimed  int
	events   map[events.Type]int
	turns    int
	skipped  map[string]int
	paths    map[string]struct{}
	warnings []string
	dropped  int
}

func newTally(agent Agent, file string) *tally {
	return &tally{agent: agent, files: []string{file}, events: map[events.Type]int{},
		skipped: map[string]int{}, paths: map[string]struct{}{}}
}

func (t *tally) warn(format string, args ...any) {
	if len(t.warnings) >= maxWarnings {
		t.dropped++
		return
	}
	t.warnings = append(t.warnings, fmt.Sprintf(format, args...))
}

func (t *tally) path(p string) {
	if p != "" {
		t.paths[p] = struct{}{}
	}
}

func (t *tally) report() Report {
	r := Report{Agent: t.agent, Files: append([]string(nil), t.files...), Records: t.records,
		Events: sortedCounts(t.events), Turns: t.turns, Untimed: t.untimed, Paths: len(t.paths),
		Warnings: append([]string(nil), t.warnings...)}
	if len(t.skipped) > 0 {
		r.Skipped = sortedCounts(t.skipped)
	}
	if t.dropped > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d more warnings not shown", t.dropped))
	}
	if r.Events == nil {
		r.Events = []events.Count{}
	}
	return r
}

func sortedCounts[K ~string](m map[K]int) []events.Count {
	out := make([]events.Count, 0, len(m))
	for k, n := range m {
		out = append(out, events.Count{Name: string(k), N: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
