package events

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// checkDecisionAgrees fails when checkDecisionFast accepts data that decodeStrict refuses or
// whose decision does not validate; it returns whether it accepted.
func checkDecisionAgrees(t *testing.T, data []byte) bool {
	t.Helper()
	if !checkDecisionFast(data) {
		return false
	}
	var d Decision
	if err := decodeStrict(data, &d); err != nil {
		t.Fatalf("%.200q: checkDecisionFast accepted what encoding/json refuses: %v", data, err)
	}
	if err := d.validate(); err != nil {
		t.Fatalf("%.200q: checkDecisionFast accepted a decision that does not validate: %v", data, err)
	}
	return true
}

// A decision as the engine writes it is checked without decoding it; whatever the check
// accepts, encoding/json decodes and the decision validates.
func TestCheckDecisionFast(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 500 {
		d := randomDecision(r)
		ev, err := New(d)
		if err != nil {
			t.Fatal(err)
		}
		if checkDecisionAgrees(t, ev.Data) {
			accepted++
		}
	}
	if accepted < 400 {
		t.Errorf("%d of 500 encoded decisions were checked fast, want most", accepted)
	}
	base := `"snapshot":2,"engine":"e","context":[{"path":"a","sources":[{"kind":"k","seq":3,"turn":1}]}],"included":[],"excluded":[{"id":"x","name":"n","category":"c","reason":"r","matched":[{"condition":"paths","pattern":"p"}]}]`
	tests := []struct {
		data string
		fast bool
	}{
		{`{"turn":1,` + base + `}`, true},
		{` { "turn" : 7 , ` + base + ` } `, true},
		{`{"turn":1,"dropped":[{"name":"x","n":-3}],` + base + `}`, true},
		{`{"turn":1,"removed":["a\u00e9\n"],` + base + `}`, true},
		{`{"turn":0,` + base + `}`, false},  // does not validate
		{`{"turn":-1,` + base + `}`, false}, // does not validate
		{`{` + base + `}`, false},           // no turn: does not validate
		{`{"turn":1.0,` + base + `}`, false},
		{`{"turn":1e0,` + base + `}`, false},
		{`{"turn":01,` + base + `}`, false},
		{`{"turn":"1",` + base + `}`, false},
		{`{"turn":1,"snapshot":-2,` + base[len(`"snapshot":2,`):] + `}`, false},
		{`{"turn":1,"snapshot":18446744073709551616,` + base[len(`"snapshot":2,`):] + `}`, false},
		{`{"turn":99999999999999999999,` + base + `}`, false},
		{`{"turn":1,"Engine":"x",` + base + `}`, false},
		{`{"turn":1,"engine":"x",` + base + `}`, false}, // twice
		{`{"turn":1,"extra":1,` + base + `}`, false},
		{`{"turn":1,"mode":null,` + base + `}`, false},
		{`{"turn":1,"gone":[null],` + base + `}`, false},
		{`{"turn":1,"gone":{},` + base + `}`, false},
		{`{"turn":1,"gone":[{"path":1}],` + base + `}`, false},
		{`{"turn":1,"gone":[{"path":"a","extra":true}],` + base + `}`, false},
		{`{"turn":1,"gone":[{"path":"a","path":"b"}],` + base + `}`, false},
		{`{"turn":1,` + strings.Replace(base, `"turn":1}`, `"turn":true}`, 1) + `}`, false},
		{`{"turn":1,` + base + `,}`, false},
		{`{"turn":1,` + base + `}x`, false},
		{`{"turn":1,` + base + `]`, false},
		{`[]`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := checkDecisionAgrees(t, []byte(tt.data)); got != tt.fast {
			t.Errorf("%.120s: checked fast %v, want %v", tt.data, got, tt.fast)
		}
	}
}

// Whatever checkDecisionFast accepts decodes and validates.
func FuzzCheckDecisionFast(f *testing.F) {
	f.Add([]byte(`{"turn":1,"snapshot":2,"engine":"e","context":[],"included":[],"excluded":[]}`))
	f.Add([]byte(`{"turn":3,"snapshot":2,"base":1,"engine":"e","context":[{"path":"a","sources":[]}],"included":[{"id":"a","name":"b","category":"c","reason":"r"}],"excluded":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !checkDecisionFast(data) {
			return
		}
		var d Decision
		if err := decodeStrict(data, &d); err != nil {
			t.Fatalf("%q: accepted, refused by encoding/json: %v", data, err)
		}
		if err := d.validate(); err != nil {
			t.Fatalf("%q: accepted, does not validate: %v", data, err)
		}
	})
}
