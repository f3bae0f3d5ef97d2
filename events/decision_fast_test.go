package events

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestDecisionFastReadsWhatEncodingJSONReads: every decision encoded as a log writes it, random
// ones with every field empty, nil, zero or awkward among them, reads the same through the fast
// decoder as through encoding/json, and the fast decoder takes every one without a negative
// number or a null (a nil list; a decision of the engine has neither), which go to
// encoding/json.
func TestDecisionFastReadsWhatEncodingJSONReads(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	decisions := []*Decision{fullDecision(), {Turn: 1, Engine: "e", Context: []ContextPath{}, Included: []RuleOutcome{}, Excluded: []RuleOutcome{}}}
	for range 5_000 {
		decisions = append(decisions, randomDecision(r))
	}
	for i, d := range decisions {
		data := d.appendJSON(nil)
		if !checkFastAgrees(t, TypeDecision, data) &&
			!bytes.Contains(data, []byte(":-")) && !bytes.Contains(data, []byte(":null")) {
			s := fastScanner{b: data}
			s.decision(new(Decision), true)
			t.Fatalf("decision %d went to encoding/json, at byte %d: %s", i, s.i, data)
		}
	}
}

// TestDecisionFastRefuses: what encoding/json reads in a way of its own, or refuses, the fast
// decoder leaves to it.
func TestDecisionFastRefuses(t *testing.T) {
	for _, data := range []string{
		`{"turn":1,"turn":2,"engine":"e","context":[],"included":[],"excluded":[]}`,
		`{"Turn":1,"engine":"e","context":[],"included":[],"excluded":[]}`,
		`{"turn":1,"engine":"e","context":null,"included":[],"excluded":[]}`,
		`{"turn":1,"engine":"e","context":[{"path":"a","path":"b","sources":[]}],"included":[],"excluded":[]}`,
		`{"turn":1,"engine":"e","context":[],"included":[{"id":"r","matched":[{"condition":"paths","extra":1}]}],"excluded":[]}`,
		`{"turn":1,"engine":"e","context":[],"included":[],"excluded":[],"diagnostics":[{"line":-1,"message":"m"}]}`,
		`{"turn":1.0,"engine":"e","context":[],"included":[],"excluded":[]}`,
		`{"turn":1,"snapshot":18446744073709551616,"engine":"e","context":[],"included":[],"excluded":[]}`,
		`{"turn":1,"engine":"e","context":[],"included":[],"excluded":[]} {}`,
		`{"turn":1,"engine":"e","context":[{"path":"a","sources":[{"kind":"k","seq":"1"}]}],"included":[],"excluded":[]}`,
	} {
		if checkFastAgrees(t, TypeDecision, []byte(data)) {
			t.Errorf("the fast decoder took %s", data)
		}
	}
}

// BenchmarkDecisionDecode decodes fullDecision's bytes (a hundred paths over sixty rules) as a
// reader of past decisions does (Event.Payload).
func BenchmarkDecisionDecode(b *testing.B) {
	ev, err := New(fullDecision())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(ev.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ev.Payload(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecisionOutcomesIsPayloadLessEvidence: DecisionOutcomes gives what Payload gives less the
// evidence of the context's paths, for decisions the fast reader takes and for those it leaves
// to encoding/json, and refuses what Payload refuses, malformed evidence included.
func TestDecisionOutcomesIsPayloadLessEvidence(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	decisions := []*Decision{fullDecision()}
	for range 2_000 {
		decisions = append(decisions, randomDecision(r))
	}
	for i, d := range decisions {
		ev, err := New(d)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		full := want.(*Decision)
		for i := range full.Context {
			full.Context[i].Sources = nil
		}
		got, err := DecisionOutcomes(ev)
		if err != nil {
			t.Fatalf("decision %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, full) {
			t.Fatalf("decision %d:\n got %#v\nwant %#v", i, got, full)
		}
	}
	for _, tc := range []struct{ name, data string }{
		{"a context that is not a list", `{"turn":1,"engine":"e","context":"x","included":[],"excluded":[]}`},
		{"a context path with a key of no field", `{"turn":1,"engine":"e","context":[{"path":"a","size":1}],"included":[],"excluded":[]}`},
		{"a gone path that is a number", `{"turn":2,"base":1,"engine":"e","context":[],"gone":[3],"included":[],"excluded":[]}`},
		{"evidence that is not a list", `{"turn":1,"engine":"e","context":[{"path":"a","sources":{}}],"included":[],"excluded":[]}`},
		{"evidence with a key of no field", `{"turn":1,"engine":"e","context":[{"path":"a","sources":[{"kind":"k","why":1}]}],"included":[],"excluded":[]}`},
		{"turn 0", `{"turn":0,"engine":"e","context":[],"included":[],"excluded":[]}`},
		{"not JSON", `{"turn":1,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := Event{Type: TypeDecision, V: schemas[TypeDecision].current, Data: []byte(tc.data)}
			if _, err := ev.Payload(); err == nil {
				t.Fatal("Payload took it")
			}
			if _, err := DecisionOutcomes(ev); !errors.Is(err, ErrInvalid) {
				t.Fatalf("DecisionOutcomes: %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := DecisionOutcomes(Event{Type: TypeToolCall, Data: []byte(`{}`)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a tool call: %v, want ErrInvalid", err)
	}
}
