package agentlog

import (
	"io"
	"strings"
	"testing"
)

// run imports an inline JSONL fixture (one record a line) and renders what came out.
func run(t *testing.T, agent Agent, lines ...string) ([]string, Report) {
	t.Helper()
	return runOpts(t, agent, Options{}, lines...)
}

func runOpts(t *testing.T, agent Agent, opts Options, lines ...string) ([]string, Report) {
	t.Helper()
	var got []string
	rep, err := importJSONL(agent, "fixture.jsonl", strings.NewReader(strings.Join(lines, "\n")), opts, collect(&got))
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return got, rep
}

// runCline imports an inline Cline task: ui_messages.json, and optionally the api history and
// metadata ("" for absent).
func runCline(t *testing.T, ui, api, meta string) ([]string, Report) {
	t.Helper()
	var got []string
	rep, err := importCline(clineFixture(ui, api, meta), Options{}, collect(&got))
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return got, rep
}

func clineFixture(ui, api, meta string) clineSources {
	src := clineSources{ui: "ui_messages.json", openUI: opener(ui)}
	if api != "" {
		src.api, src.openAPI = "api_conversation_history.json", opener(api)
	}
	if meta != "" {
		src.meta, src.openMeta = "task_metadata.json", opener(meta)
	}
	return src
}

func opener(s string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
}

// collect renders each item as "TURN" or "<type> <data>".
func collect(got *[]string) func(Item) error {
	return func(it Item) error {
		if it.Turn {
			*got = append(*got, "TURN")
			return nil
		}
		*got = append(*got, string(it.Event.Type)+" "+string(it.Event.Data))
		return nil
	}
}

// only keeps the rendered items of one event type (or "TURN").
func only(items []string, typ string) []string {
	var out []string
	for _, it := range items {
		if it == typ || strings.HasPrefix(it, typ+" ") {
			out = append(out, it)
		}
	}
	return out
}

func count(rep Report, name string) int {
	for _, c := range rep.Skipped {
		if c.Name == name {
			return c.N
		}
	}
	return 0
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// lineCase is a table case for an importer of JSON Lines sessions: the session's lines, the
// items expected (all of them, or those of type typ), and the skipped records expected by kind.
type lineCase struct {
	name  string
	lines []string
	typ   string // the event type compared; "" compares everything
	want  []string
	skip  map[string]int
}

func runLineCases(t *testing.T, agent Agent, tests []lineCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rep := run(t, agent, tt.lines...)
			if tt.typ != "" {
				got = only(got, tt.typ)
			}
			equal(t, "items", got, tt.want)
			for k, n := range tt.skip {
				if c := count(rep, k); c != n {
					t.Errorf("skipped %s = %d, want %d (report %v)", k, c, n, rep.Skipped)
				}
			}
		})
	}
}
