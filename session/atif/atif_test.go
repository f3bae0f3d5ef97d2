package atif

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// schema is the vendored ATIF v1.7 JSON Schema (testdata/README.md says where it comes from).
func schema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "atif-v1.7.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// validator checks a document against the subset of JSON Schema the vendored schema uses:
// $ref, type, enum, required, properties, additionalProperties: false, items, minItems,
// minimum, anyOf.
type validator struct {
	root map[string]any
	errs []string
}

func (v *validator) errorf(path, format string, args ...any) {
	v.errs = append(v.errs, path+": "+fmt.Sprintf(format, args...))
}

func (v *validator) resolve(s map[string]any) map[string]any {
	ref, ok := s["$ref"].(string)
	if !ok {
		return s
	}
	if ref == "#" {
		return v.root
	}
	name := strings.TrimPrefix(ref, "#/$defs/")
	return v.root["$defs"].(map[string]any)[name].(map[string]any)
}

func typeOf(x any) string {
	switch n := x.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if n == float64(int64(n)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func typeMatches(want any, got string) bool {
	var names []string
	switch w := want.(type) {
	case string:
		names = []string{w}
	case []any:
		for _, n := range w {
			names = append(names, n.(string))
		}
	}
	return slices.Contains(names, got) || got == "integer" && slices.Contains(names, "number")
}

func (v *validator) check(path string, s map[string]any, x any) {
	s = v.resolve(s)
	if alts, ok := s["anyOf"].([]any); ok {
		for _, alt := range alts {
			w := &validator{root: v.root}
			w.check(path, alt.(map[string]any), x)
			if len(w.errs) == 0 {
				return
			}
		}
		v.errorf(path, "matches none of anyOf")
		return
	}
	if want, ok := s["type"]; ok && !typeMatches(want, typeOf(x)) {
		v.errorf(path, "type %s, want %v", typeOf(x), want)
		return
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, x) {
		v.errorf(path, "%v is not one of %v", x, enum)
	}
	if min, ok := s["minimum"].(float64); ok {
		if n, isNum := x.(float64); isNum && n < min {
			v.errorf(path, "%v below the minimum %v", n, min)
		}
	}
	switch val := x.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := val[r.(string)]; !ok {
				v.errorf(path, "required %q is missing", r)
			}
		}
		keys := make([]string, 0, len(val))
		for k := range val {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if s["additionalProperties"] == false {
					v.errorf(path, "unknown key %q", k)
				}
				continue
			}
			v.check(path+"."+k, ps, val[k])
		}
	case []any:
		if min, ok := s["minItems"].(float64); ok && float64(len(val)) < min {
			v.errorf(path, "%d items, want at least %v", len(val), min)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range val {
				v.check(fmt.Sprintf("%s[%d]", path, i), items, e)
			}
		}
	}
}

// modelRules are the toolkit's validators a schema cannot say.
func modelRules(doc map[string]any) []string {
	var errs []string
	steps, _ := doc["steps"].([]any)
	for i, st := range steps {
		s, _ := st.(map[string]any)
		if id, _ := s["step_id"].(float64); int(id) != i+1 {
			errs = append(errs, fmt.Sprintf("steps[%d].step_id %v: want %d (sequential from 1)", i, s["step_id"], i+1))
		}
		if s["source"] != "agent" {
			for _, f := range []string{"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"} {
				if s[f] != nil {
					errs = append(errs, fmt.Sprintf("steps[%d].%s: only on agent steps, source is %v", i, f, s["source"]))
				}
			}
		}
		if ts, ok := s["timestamp"].(string); ok {
			if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
				errs = append(errs, fmt.Sprintf("steps[%d].timestamp %q: not ISO 8601", i, ts))
			}
		}
		ids := map[string]bool{}
		calls, _ := s["tool_calls"].([]any)
		for _, c := range calls {
			ids[c.(map[string]any)["tool_call_id"].(string)] = true
		}
		if obs, ok := s["observation"].(map[string]any); ok {
			res, _ := obs["results"].([]any)
			for _, r := range res {
				if id, ok := r.(map[string]any)["source_call_id"].(string); ok && !ids[id] {
					errs = append(errs, fmt.Sprintf("steps[%d]: observation source_call_id %q names no tool call of the step", i, id))
				}
			}
		}
	}
	return errs
}

func validate(t *testing.T, doc []byte) []string {
	t.Helper()
	var x map[string]any
	if err := json.Unmarshal(doc, &x); err != nil {
		return []string{err.Error()}
	}
	v := &validator{root: schema(t)}
	v.check("$", v.root, x)
	return append(v.errs, modelRules(x)...)
}

// TestValidator: the toolkit's own trajectory passes; a document breaking each kind of rule
// fails, so a passing export is no vacuous pass.
func TestValidator(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "nat-exmp01.atif.json"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := validate(t, good); len(errs) > 0 {
		t.Fatalf("the toolkit's own trajectory fails: %v", errs)
	}
	tests := []struct {
		name string
		edit func(doc map[string]any)
		want string
	}{
		{"no agent", func(d map[string]any) { delete(d, "agent") }, `required "agent" is missing`},
		{"no agent version", func(d map[string]any) { delete(d["agent"].(map[string]any), "version") }, `required "version"`},
		{"other version", func(d map[string]any) { d["schema_version"] = "ATIF-v2.0" }, "is not one of"},
		{"unknown key", func(d map[string]any) { d["tasklog"] = true }, `unknown key "tasklog"`},
		{"no steps", func(d map[string]any) { d["steps"] = []any{} }, "at least 1"},
		{"step id", func(d map[string]any) { step(d, 1)["step_id"] = 7.0 }, "sequential from 1"},
		{"source", func(d map[string]any) { step(d, 0)["source"] = "tool" }, "is not one of"},
		{"no message", func(d map[string]any) { delete(step(d, 0), "message") }, `required "message"`},
		{"tool call on a user step", func(d map[string]any) {
			step(d, 0)["tool_calls"] = []any{map[string]any{"tool_call_id": "c", "function_name": "f"}}
		}, "only on agent steps"},
		{"dangling observation", func(d map[string]any) {
			step(d, 1)["observation"] = map[string]any{"results": []any{map[string]any{"source_call_id": "nope"}}}
		}, "names no tool call"},
		{"timestamp", func(d map[string]any) { step(d, 0)["timestamp"] = "yesterday" }, "not ISO 8601"},
	}
	for _, tt := range tests {
		var d map[string]any
		json.Unmarshal(good, &d)
		tt.edit(d)
		b, _ := json.Marshal(d)
		errs := validate(t, b)
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, tt.want) }) {
			t.Errorf("%s: errors %v, want one with %q", tt.name, errs, tt.want)
		}
	}
}

func step(d map[string]any, i int) map[string]any { return d["steps"].([]any)[i].(map[string]any) }

func importLog(t *testing.T, name string) (store.Store, uuid.UUID) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "tasklog.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imp, err := session.Import(context.Background(), db, f, name, session.ImportOptions{})
	if err != nil || len(imp) != 1 {
		t.Fatalf("import %s: %v", name, err)
	}
	return db, imp[0].Task
}

// TestTrajectory writes the trajectory of a Claude Code session recorded through its hooks:
// it passes the ATIF v1.7 schema and the toolkit's rules, matches its golden file, holds a
// step per prompt, tool call, load and stop, and carries every decision and delivery of the
// log, in full, in the steps' extra.
func TestTrajectory(t *testing.T) {
	db, task := importLog(t, "claude-code.jsonl")
	var buf bytes.Buffer
	if err := WriteTask(context.Background(), db, task, &buf); err != nil {
		t.Fatal(err)
	}
	if errs := validate(t, buf.Bytes()); len(errs) > 0 {
		t.Fatalf("the trajectory breaks ATIF v1.7:\n%s", strings.Join(errs, "\n"))
	}
	golden := filepath.Join("testdata", "claude-code.atif.json")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s differs; rerun with -update and review the diff.\ngot:\n%s", golden, buf.String())
	}

	var tr Trajectory
	if err := json.Unmarshal(buf.Bytes(), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.SessionID != "a0d17000-5e55-4b7a-a76c-2bafc4c82781" || tr.Agent.Name != "claude-code" {
		t.Errorf("session_id %q, agent %q: want the agent's session id and claude-code", tr.SessionID, tr.Agent.Name)
	}
	recs, err := session.Decisions(context.Background(), db, task)
	if err != nil {
		t.Fatal(err)
	}
	var decisions []Decision
	var deliveries []Delivery
	sources := map[string]int{}
	for _, s := range tr.Steps {
		sources[s.Source]++
		if s.Extra != nil {
			decisions = append(decisions, s.Extra.Tasklog.Decisions...)
			deliveries = append(deliveries, s.Extra.Tasklog.Deliveries...)
		}
	}
	if len(decisions) != len(recs) {
		t.Fatalf("%d decisions in the steps, the log has %d", len(decisions), len(recs))
	}
	for i, d := range decisions {
		r := recs[i]
		if d.Seq != r.Seq || len(d.Included) != len(r.Decision.Included) || len(d.Excluded) != len(r.Decision.Excluded) {
			t.Errorf("decision %d: seq %d with %d/%d rules, the log's seq %d has %d/%d", i, d.Seq, len(d.Included), len(d.Excluded),
				r.Seq, len(r.Decision.Included), len(r.Decision.Excluded))
		}
		for _, rule := range append(d.Included, d.Excluded...) {
			if rule.Reason == "" || rule.ID == "" {
				t.Errorf("decision seq %d: rule without id or reason: %+v", d.Seq, rule)
			}
		}
	}
	n := 0
	for ev, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeDelivery {
			n++
		}
	}
	if len(deliveries) != n || n == 0 {
		t.Errorf("%d deliveries in the steps, the log has %d", len(deliveries), n)
	}
	if sources["user"] != 1 || sources["agent"] != 2 || sources["system"] < 4 {
		t.Errorf("steps by source %v: want 1 user (the prompt), 2 agent (Write, Read), the loads, write and stop as system", sources)
	}
	if strings.Contains(buf.String(), "Every change comes with a test") {
		t.Error("the trajectory holds a rule's text: only names, sizes and digests of what was delivered")
	}
}
