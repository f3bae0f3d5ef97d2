package events

import (
	"bytes"
	"math/rand/v2"
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
			s.decision(new(Decision))
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
