package events

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExportLineRoundTrip(t *testing.T) {
	for _, e := range sampleLog(t) {
		line, err := MarshalJSONLine(e)
		if err != nil {
			t.Fatal(err)
		}
		l, err := ParseLine(line)
		if err != nil {
			t.Fatalf("%s: %v\n%s", e, err, line)
		}
		if !l.HasHash || !l.HasID || !l.HasSeq || !l.HasTask || !l.HasTime || !l.HasTurn {
			t.Errorf("%s: lost a field: %+v", e, l)
		}
		again, _ := MarshalJSONLine(l.Event)
		if !bytes.Equal(line, again) {
			t.Errorf("re-export differs:\n%s\n%s", line, again)
		}
		if l.Event.Hash != e.Hash {
			t.Errorf("%s: hash changed", e)
		}
	}
}

// An event's data is exported as the event holds it, byte for byte: data kept verbatim from an
// exported line that spaced it out (its hash covers the spaces) exports to the same line, which
// imports again. Data that is not one JSON value on one line cannot be a line's: an error.
func TestExportLineKeepsTheDataBytes(t *testing.T) {
	e := sealed(t, &TaskStarted{Roots: []string{"/ws"}})[0]
	e.Data = []byte(`{ "roots": [ "/ws" ] }`)
	e.Seal(e.Prev)
	line, err := MarshalJSONLine(e)
	if err != nil || !strings.Contains(string(line), `"data":{ "roots": [ "/ws" ] },"hash"`) {
		t.Fatalf("MarshalJSONLine: %s, %v; want the data's bytes", line, err)
	}
	l, err := ParseLine(line)
	if err != nil || l.Event.Hash != e.Hash || string(l.Event.Data) != string(e.Data) {
		t.Fatalf("ParseLine of the export: %+v, %v", l, err)
	}
	if again, _ := MarshalJSONLine(l.Event); !bytes.Equal(again, line) {
		t.Errorf("exported again:\n%s\nfirst:\n%s", again, line)
	}
	e.Data = []byte("{\r\"roots\":[]}") // a carriage return inside a line reads back as it is
	e.Seal(e.Prev)
	if line, err := MarshalJSONLine(e); err != nil {
		t.Errorf("data with a carriage return: %v", err)
	} else if l, err := ParseLine(line); err != nil || string(l.Event.Data) != string(e.Data) {
		t.Errorf("data with a carriage return read back as %q, %v", l.Event.Data, err)
	}
	for _, data := range []string{"{\n\"roots\":[]}", `{"roots":`, ``} {
		e.Data = []byte(data)
		if _, err := MarshalJSONLine(e); err == nil || !strings.Contains(err.Error(), "not one JSON value on one line") {
			t.Errorf("data %q: %v, want an error", data, err)
		}
	}
}

func TestExportDoesNotEscapeHTML(t *testing.T) {
	line, _ := MarshalJSONLine(sampleLog(t)[1])
	if !strings.Contains(string(line), `<Button> under apps/web & test`) {
		t.Errorf("line escapes markup: %s", line)
	}
}

func TestAuthoringLines(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantData string
		wantErr  error
		inErr    string
	}{
		{"minimal", `{"type":"user_message","data":{"text":"fix src/a.ts"}}`, `{"text":"fix src/a.ts"}`, nil, ""},
		{"canonical params", `{"type":"tool_call","data":{"tool":"read_file","params":{"z":1,"path":"a"}}}`,
			`{"tool":"read_file","params":{"path":"a","z":1}}`, nil, ""},
		{"old version kept", `{"type":"mention","v":1,"data":{"path":"a.ts"}}`, `{"path":"a.ts"}`, nil, ""},
		{"no data", `{"type":"tab_snapshot"}`, `{"open":[],"visible":[]}`, nil, ""},
		{"unknown type", `{"type":"telepathy","data":{}}`, "", ErrUnknownType, `"telepathy"`},
		{"typo in data", `{"type":"user_message","data":{"txt":"hi"}}`, "", ErrInvalid, `"txt"`},
		{"typo in envelope", `{"type":"user_message","tpye":1,"data":{"text":"hi"}}`, "", ErrInvalid, `"tpye"`},
		{"missing type", `{"data":{"text":"hi"}}`, "", ErrInvalid, `missing "type"`},
		{"truncated", `{"type":"user_message","data":{"text":"hi`, "", ErrInvalid, "unexpected EOF"},
		{"bad op", `{"type":"file_write","data":{"path":"a","op":"move"}}`, "", ErrInvalid, "op"},
		{"bad task", `{"task":"nope","type":"user_message","data":{"text":"x"}}`, "", ErrInvalid, "task"},
		{"newer schema", `{"type":"mention","v":7,"data":{"path":"a"}}`, "", ErrNewerVersion, "v7"},
		{"hash without id", `{"type":"user_message","data":{"text":"x"},"hash":"` + strings.Repeat("0", 64) + `"}`, "", ErrInvalid, "must also carry"},
		{"data null", `{"type":"agent_stopped","data":null}`, "", ErrInvalid, `"data" is null`},
		{"data null, spaced", `{"type":"agent_stopped","data" : null }`, "", ErrInvalid, `"data" is null`},
		{"key twice in data", `{"type":"user_message","data":{"text":"a","text":"b"}}`, "", ErrInvalid,
			`data: key "text" appears twice in one object`},
		{"key twice, once escaped", `{"type":"user_message","data":{"text":"a","t\u0065xt":"b"}}`, "", ErrInvalid,
			`data: key "text" appears twice`},
		{"key twice in the envelope", `{"type":"user_message","type":"mention","data":{"path":"a"}}`, "", ErrInvalid,
			`key "type" appears twice`},
		{"key twice deep in params", `{"type":"tool_call","data":{"tool":"t","params":{"a":[0,{"b":1,"b":2}]}}}`, "", ErrInvalid,
			`data.params.a[1]: key "b" appears twice`},
		{"same key in two objects", `{"type":"tool_call","data":{"tool":"t","params":{"a":{"b":1},"c":{"b":2}}}}`,
			`{"tool":"t","params":{"a":{"b":1},"c":{"b":2}}}`, nil, ""},
		{"invalid UTF-8", "{\"type\":\"user_message\",\"data\":{\"text\":\"a\xffb\"}}", "", ErrInvalid,
			"data.text: byte 0xff is not valid UTF-8"},
		{"encoded surrogate", "{\"type\":\"user_message\",\"data\":{\"text\":\"\xed\xa0\x80\"}}", "", ErrInvalid,
			"data.text: byte 0xed is not valid UTF-8"},
		{"invalid UTF-8 in a key", "{\"type\":\"tool_call\",\"data\":{\"tool\":\"t\",\"params\":{\"\xc3\":1}}}", "", ErrInvalid,
			"data.params.(key): byte 0xc3 is not valid UTF-8"},
		{"lone high surrogate", `{"type":"user_message","data":{"text":"a\ud800b"}}`, "", ErrInvalid,
			`data.text: \ud800 is half of a UTF-16 surrogate pair`},
		{"lone low surrogate", `{"type":"user_message","data":{"text":"\udc00"}}`, "", ErrInvalid, `\udc00 is half`},
		{"surrogate pair", `{"type":"user_message","data":{"text":"\ud83d\ude00 \u00e9"}}`, `{"text":"😀 é"}`, nil, ""},
		{"bidi control kept", `{"type":"user_message","data":{"text":"a\u202eb"}}`, "{\"text\":\"a\u202eb\"}", nil, ""},
		{"hash without turn", `{"task":"0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c","seq":1,"id":"01M6NS91G0MVZ1H5AXG5VQ0BY9","type":"user_message","data":{"text":"x"},"hash":"` + strings.Repeat("0", 64) + `"}`,
			"", ErrInvalid, "must also carry task, id, seq and turn"},
		{"time the log cannot keep", `{"time":"2300-01-01T00:00:00Z","type":"user_message","data":{"text":"x"}}`, "", ErrInvalid,
			`time "2300-01-01T00:00:00Z" is outside what a log keeps (1677-09-21T00:12:43Z to 2262-04-11T23:47:16Z)`},
		{"time the log keeps, the last one", `{"time":"2262-04-11T23:47:16.854775807Z","type":"user_message","data":{"text":"x"}}`, `{"text":"x"}`, nil, ""},
		{"blob sum in capitals", `{"type":"rules_snapshot","data":{"files":[{"path":"a.md","blob":"` + strings.Repeat("AB", 32) + `"}]}}`, "", ErrInvalid,
			"SHA-256 sum in 64 lowercase hex digits"},
		{"blob sum not hex", `{"type":"rules_snapshot","data":{"files":[{"path":"a.md","blob":"` + strings.Repeat("ab", 31) + `zz"}]}}`, "", ErrInvalid,
			"SHA-256 sum in 64 lowercase hex digits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ParseLine([]byte(tt.line))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if string(l.Event.Data) != tt.wantData {
					t.Errorf("data = %s, want %s", l.Event.Data, tt.wantData)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.inErr) {
				t.Errorf("err = %v, want %v mentioning %q", err, tt.wantErr, tt.inErr)
			}
		})
	}
}

func TestTamperedLineIsRefused(t *testing.T) {
	line, _ := MarshalJSONLine(sampleLog(t)[1])
	tampered := strings.Replace(string(line), "apps/web", "apps/api", 1)
	_, err := ParseLine([]byte(tampered))
	if !errors.Is(err, ErrHashMismatch) || !strings.Contains(err.Error(), "seq 2") {
		t.Errorf("err = %v, want ErrHashMismatch at seq 2", err)
	}
	// Both hashes in full, so a person can compare them with another copy of the log.
	if h := sampleLog(t)[1].Hash.String(); !strings.Contains(err.Error(), "hash "+h+" does not match") {
		t.Errorf("err = %v, want the line's hash %s in full", err, h)
	}
}

func TestLineReaderNamesFileAndLine(t *testing.T) {
	in := "{\"type\":\"user_message\",\"data\":{\"text\":\"a\"}}\n\n{\"type\":\"user_message\",\"data\":{\"text\":\"b\"}}\n{\"type\":\"bogus\"}\n"
	lr := NewLineReader(strings.NewReader(in), "s.jsonl")
	var nos []int
	for {
		l, err := lr.Next()
		if err == io.EOF {
			t.Fatal("reached EOF without the bad line's error")
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "s.jsonl:4: ") || !errors.Is(err, ErrUnknownType) {
				t.Errorf("err = %v, want s.jsonl:4 unknown type", err)
			}
			break
		}
		nos = append(nos, l.No)
	}
	if len(nos) != 2 || nos[0] != 1 || nos[1] != 3 {
		t.Errorf("line numbers = %v, want [1 3]", nos)
	}
}

func TestSummary(t *testing.T) {
	log := sampleLog(t)
	want := []string{
		"roots /ws; runtime cline 3.51.0",
		`"Add a <Button> under apps/web & test it"`,
		"/apps/web/src/App.tsx → apps/web/src/App.tsx",
		`write_to_file content="x" path="apps/web/a.tsx"`,
		"1 open, 0 visible",
		"create apps/web/a.tsx",
		"mode=plan",
		"disable cline:.clinerules/a.md",
	}
	for i, e := range log {
		if got := Summary(e); got != want[i] {
			t.Errorf("Summary(%s) = %q, want %q", e, got, want[i])
		}
	}
	for _, tt := range []struct {
		d    Decision
		want string
	}{
		{Decision{Turn: 1, Snapshot: 2, Engine: "rules/1", Context: []ContextPath{{Path: "a.ts"}},
			Included: []RuleOutcome{{ID: "r", Name: "general"}}},
			"turn 1: 1 included [general], 0 excluded, 1 paths"},
		{Decision{Turn: 2, Snapshot: 2, Base: 3, Engine: "rules/1", Gone: []PathRef{{Path: "a.ts"}},
			Excluded: []RuleOutcome{{ID: "r", Name: "general"}}},
			"turn 2, changes since seq 3: now included [], 1 now excluded, 0 removed; 0 paths new or changed, 1 gone"},
	} {
		ev, err := New(&tt.d)
		if err != nil {
			t.Fatal(err)
		}
		if got := Summary(ev); got != tt.want {
			t.Errorf("Summary = %q, want %q", got, tt.want)
		}
	}
	if got := Summary(Event{Seq: 3, Type: "x"}); !strings.Contains(got, "unreadable") {
		t.Errorf("summary of an unknown event = %q", got)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, e := range sampleLog(f) {
		line, _ := MarshalJSONLine(e)
		f.Add(line)
	}
	f.Add([]byte(`{"type":"tool_call","data":{"tool":"x","params":{"a":[1,{"b":null}]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLine(b)
		if err != nil {
			return
		}
		if _, err := l.Event.Payload(); err != nil {
			t.Fatalf("accepted line has an undecodable payload: %v", err)
		}
	})
}

// FuzzCheckStrict: checkStrict refuses exactly what encoding/json reads but changes or reads
// one of two ways: a key given twice in an object, a string that is not valid Unicode. The
// oracle is encoding/json's token stream (which keeps duplicate keys and unquotes strings,
// turning what is not valid Unicode into U+FFFD).
func FuzzCheckStrict(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":1},"c":[{"b":1,"\u0062":2}]}`, "\"\xff\"", `"\ud800"`,
		`"\ud83d\ude00"`, `{"a":"\udc00\ud800"}`, `[1,2.5e3,true,null,"x"]`, "{\"\xc3\xa9\":\"\xef\xbf\xbd\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := checkStrict(b)
		if !json.Valid(b) {
			return // the decoder refuses it, whatever checkStrict said
		}
		ambiguous := oracleAmbiguous(t, b)
		if (err != nil) != ambiguous {
			t.Fatalf("%q: checkStrict says %v; encoding/json's tokens say ambiguous: %v", b, err, ambiguous)
		}
	})
}

// oracleAmbiguous reports whether valid JSON b gives a key twice in an object or holds a
// string that unquotes to other text than it spells: U+FFFD where b has none.
func oracleAmbiguous(t *testing.T, b []byte) bool {
	if !utf8.Valid(b) {
		return true
	}
	if bytes.Contains(b, []byte(`\\`)) {
		t.Skip("an escaped backslash makes counting the escapes of U+FFFD ambiguous")
	}
	literalFFFD := bytes.Count(b, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(b), []byte(`\ufffd`))
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		keys     map[string]bool
		isObject bool
		wantKey  bool
	}
	var stack []*frame
	decodedFFFD := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%q: json.Valid accepts it but Token fails: %v", b, err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &frame{keys: map[string]bool{}, isObject: true, wantKey: true})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			decodedFFFD += strings.Count(v, "\uFFFD")
			if top != nil && top.isObject && top.wantKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.wantKey = false
				continue
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].isObject {
			stack[len(stack)-1].wantKey = true
		}
	}
	return decodedFFFD != literalFFFD
}

func FuzzUnmarshalBinary(f *testing.F) {
	for _, e := range sampleLog(f) {
		b, _ := e.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Event
		if e.UnmarshalBinary(b) != nil {
			return
		}
		// Non-minimal varints decode too; what matters is that a decoded event is stable.
		again, _ := e.MarshalBinary()
		var e2 Event
		if err := e2.UnmarshalBinary(again); err != nil {
			t.Fatalf("re-encoded event does not decode: %v", err)
		}
		if third, _ := e2.MarshalBinary(); !bytes.Equal(third, again) {
			t.Fatalf("encoding is not stable")
		}
	})
}

func TestBlobLines(t *testing.T) {
	for _, content := range [][]byte{[]byte("---\npaths: [\"src/**\"]\n---\nUse <T>."), {0xff, 0x00, 0xfe}} {
		sum := sha256.Sum256(content)
		line, err := MarshalBlobLine(hex.EncodeToString(sum[:]), content)
		if err != nil {
			t.Fatal(err)
		}
		l, err := ParseLine(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if l.Blob == nil || !bytes.Equal(l.Blob.Content, content) {
			t.Errorf("blob line %s did not round-trip", line)
		}
	}
	bad := `{"blob":"` + strings.Repeat("ab", 32) + `","content":"x"}`
	if _, err := ParseLine([]byte(bad)); !errors.Is(err, ErrHashMismatch) {
		t.Errorf("wrong blob sum: err = %v, want ErrHashMismatch", err)
	}
}

func TestEndLine(t *testing.T) {
	log := sampleLog(t)
	last := log[len(log)-1]
	line, err := MarshalEndLine(End{Task: last.Task, Events: last.Seq, Last: last.Hash})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLine(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if l.End == nil || l.End.Task != last.Task || l.End.Events != last.Seq || l.End.Last != last.Hash || l.Blob != nil {
		t.Errorf("closing line %s did not round-trip: %+v", line, l.End)
	}
	for _, bad := range []string{
		`{"end":"nope","events":3,"last":"` + last.Hash.String() + `"}`,
		`{"end":"` + last.Task.String() + `","events":0,"last":"` + last.Hash.String() + `"}`,
		`{"end":"` + last.Task.String() + `","events":3,"last":"abc"}`,
		`{"end":"` + last.Task.String() + `","events":3,"last":"` + last.Hash.String() + `","extra":1}`,
	} {
		if _, err := ParseLine([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseLine(%s) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestNegativeTurnIsRefused(t *testing.T) {
	_, err := ParseLine([]byte(`{"type":"user_message","turn":-2,"data":{"text":"x"}}`))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "turn -2") {
		t.Errorf("err = %v, want ErrInvalid naming turn -2", err)
	}
}

// BenchmarkParseLine parses the lines of a recorded log; BenchmarkCheckStrict is the share of
// it that checkStrict takes.
func BenchmarkParseLine(b *testing.B) {
	lines := benchLines(b)
	b.ResetTimer()
	for range b.N {
		for _, l := range lines {
			if _, err := ParseLine(l); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkCheckStrict(b *testing.B) {
	lines := benchLines(b)
	b.ResetTimer()
	for range b.N {
		for _, l := range lines {
			if err := checkStrict(l); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchLines(b *testing.B) [][]byte {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "logs", "monorepo.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	b.SetBytes(int64(n))
	return lines
}

func TestSignatureLine(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	end := End{Task: sampleLog(t)[0].Task, Events: 3, Last: sampleLog(t)[2].Hash}
	line, err := MarshalSignatureLine(end, priv)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLine(line)
	if err != nil || l.Sig == nil {
		t.Fatalf("ParseLine(%s) = %+v, %v", line, l, err)
	}
	if err := l.Sig.Verify(end, pub); err != nil {
		t.Errorf("Verify: %v", err)
	}
	other := end
	other.Events = 2
	if err := l.Sig.Verify(other, pub); !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), "changed after it was signed") {
		t.Errorf("Verify of another closing line: %v", err)
	}
	for _, bad := range []string{`{"sig":"AAAA","key":"SHA256:x"}`, `{"sig":"` + strings.Repeat("A", 88) + `"}`, `{"sig":null,"key":"k"}`} {
		if _, err := ParseLine([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseLine(%s) = %v, want ErrInvalid", bad, err)
		}
	}
}

// TestReparseLine reads every line of the repository's logs (exports of every event type,
// older versions, blob and closing lines, hand-written sessions) with ParseLine and with
// ReparseLine, and requires the same Line: ReparseLine gives what ParseLine gives for any line
// ParseLine accepted. A line altered after its hash was taken shows what ReparseLine does not
// check: ParseLine refuses it, ReparseLine reads it as it is.
func TestReparseLine(t *testing.T) {
	var files []string
	for _, pattern := range []string{"logs/*.jsonl", "logs/*/*.jsonl", "sessions/*.jsonl"} {
		found, err := filepath.Glob(filepath.Join("..", "testdata", pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, found...)
	}
	kinds := map[string]int{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, raw := range bytes.Split(b, []byte("\n")) {
			if raw = bytes.TrimSpace(raw); len(raw) == 0 {
				continue
			}
			want, wantErr := ParseLine(raw)
			if wantErr != nil {
				kinds["refused"]++ // a line ParseLine refuses is no line to reparse
				continue
			}
			got, gotErr := ReparseLine(raw)
			switch {
			case gotErr != nil:
				t.Errorf("%s:%d: ReparseLine refuses a line ParseLine accepts: %v", name, i+1, gotErr)
				continue
			case want.Blob != nil || want.End != nil || want.Sig != nil:
				kinds["other"]++
			case want.HasHash:
				kinds["hashed "+string(want.Event.Type)]++
			default:
				kinds["hand-written"]++
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:%d: ReparseLine gives\n%+v\nParseLine\n%+v", name, i+1, got, want)
			}
		}
	}
	t.Logf("lines read: %v", kinds)
	for _, k := range []string{"refused", "other", "hand-written", "hashed decision", "hashed rules_snapshot", "hashed tool_call"} {
		if kinds[k] == 0 {
			t.Errorf("no line of kind %q among the logs read: %v", k, kinds)
		}
	}

	// An exported line of an event with no payload, written without its "data": both read it
	// as {}, which the hash covers.
	empty := sealed(t, &TabSnapshot{})[0]
	empty.Data = []byte(`{}`)
	empty.Seal(empty.Prev)
	line, _ := MarshalJSONLine(empty)
	noData := []byte(strings.Replace(string(line), `,"data":{}`, "", 1))
	want, err := ParseLine(noData)
	if err != nil || string(noData) == string(line) {
		t.Fatalf("ParseLine of %s: %v", noData, err)
	}
	if got, err := ReparseLine(noData); err != nil || !reflect.DeepEqual(got, want) || string(got.Event.Data) != "{}" {
		t.Errorf("ReparseLine of a line without data: %+v, %v; want %+v", got, err, want)
	}

	line, _ = MarshalJSONLine(sampleLog(t)[1])
	tampered := []byte(strings.Replace(string(line), "apps/web", "apps/api", 1))
	if _, err := ParseLine(tampered); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("ParseLine of the altered line: %v, want ErrHashMismatch", err)
	}
	if l, err := ReparseLine(tampered); err != nil || !strings.Contains(string(l.Event.Data), "apps/api") {
		t.Errorf("ReparseLine of the altered line: %+v, %v; want it read as it is", l, err)
	}
}

// A rules snapshot an older version stored with a blob sum in capitals (an import accepted it)
// still reads; only a line read now must name its blobs in lowercase.
func TestSnapshotWithABlobSumInCapitalsReads(t *testing.T) {
	ev := Event{Type: TypeRulesSnapshot, V: 1, Data: []byte(`{"files":[{"path":"a.md","blob":"` + strings.Repeat("AB", 32) + `"}]}`)}
	p, err := ev.Payload()
	if err != nil || p.(*RulesSnapshot).Files[0].Blob != strings.Repeat("AB", 32) {
		t.Errorf("Payload: %+v, %v", p, err)
	}
}
