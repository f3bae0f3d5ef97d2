package fakemodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

var testScript = []Step{
	Call("Read", map[string]string{"file_path": "/ws/src/api/routes.ts"}),
	FreeformCall("apply_patch", "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"),
	Final("All done."),
}

// conversation builds a request body of api with turns earlier tool-call turns, the last tool
// result carrying note.
func conversation(api API, turns int, stream bool, note string) string {
	var msgs []any
	tools := []any{map[string]any{"name": "Read"}, map[string]any{"type": "custom", "name": "apply_patch"}}
	switch api {
	case Anthropic:
		msgs = append(msgs, map[string]any{"role": "user", "content": "Tidy up."})
		for i := range turns {
			id := "toolu_" + string(rune('a'+i))
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": "Read", "input": map[string]any{}}}},
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": id, "content": "file text"},
					map[string]any{"type": "text", "text": note}}})
		}
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": stream, "system": []any{map[string]any{"type": "text", "text": "You are Claude."}}, "tools": tools, "messages": msgs})
		return string(b)
	case Responses:
		msgs = append(msgs, map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Tidy up."}}})
		for range turns {
			msgs = append(msgs,
				map[string]any{"type": "custom_tool_call", "call_id": "c", "name": "apply_patch", "input": "patch"},
				map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": note}}},
				map[string]any{"type": "custom_tool_call_output", "call_id": "c", "output": "Success."})
		}
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": stream, "instructions": "You are Codex.", "tools": tools, "input": msgs})
		return string(b)
	default:
		msgs = append(msgs, map[string]any{"role": "system", "content": "You are Cline."}, map[string]any{"role": "user", "content": "Tidy up."})
		for range turns {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "Read", "arguments": "{}"}}}},
				map[string]any{"role": "tool", "tool_call_id": "c", "content": "file text"},
				map[string]any{"role": "user", "content": note})
		}
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": stream, "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "Read"}}}, "messages": msgs})
		return string(b)
	}
}

var paths = map[API]string{Anthropic: "/v1/messages", Responses: "/v1/responses", Chat: "/v1/chat/completions"}

// reply is what a client makes of an answer: the tool called with its input, or the text.
type reply struct{ Tool, Input, Text string }

func post(t *testing.T, s *Server, api API, body string) reply {
	t.Helper()
	resp, err := http.Post(s.URL()+paths[api], "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s: %s", api, resp.Status, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return readStream(t, api, resp.Body)
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return decodeReply(api, m)
}

// decodeReply reads a non-streaming answer.
func decodeReply(api API, m map[string]any) reply {
	switch api {
	case Anthropic:
		b := m["content"].([]any)[0].(map[string]any)
		if b["type"] == "tool_use" {
			in, _ := json.Marshal(b["input"])
			return reply{Tool: b["name"].(string), Input: string(in)}
		}
		return reply{Text: b["text"].(string)}
	case Responses:
		return itemReply(m["output"].([]any)[0].(map[string]any))
	default:
		msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		if calls, ok := msg["tool_calls"].([]any); ok {
			f := calls[0].(map[string]any)["function"].(map[string]any)
			return reply{Tool: f["name"].(string), Input: f["arguments"].(string)}
		}
		return reply{Text: msg["content"].(string)}
	}
}

func itemReply(it map[string]any) reply {
	switch it["type"] {
	case "custom_tool_call":
		return reply{Tool: it["name"].(string), Input: it["input"].(string)}
	case "function_call":
		return reply{Tool: it["name"].(string), Input: it["arguments"].(string)}
	}
	return reply{Text: it["content"].([]any)[0].(map[string]any)["text"].(string)}
}

// readStream assembles a streamed answer as a client does: Anthropic's deltas, the Responses
// item of output_item.done, Chat's delta chunks up to [DONE].
func readStream(t *testing.T, api API, r io.Reader) reply {
	t.Helper()
	var out reply
	done := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%s: event is not JSON: %v: %s", api, err, data)
		}
		switch api {
		case Anthropic:
			switch ev["type"] {
			case "content_block_start":
				if b := ev["content_block"].(map[string]any); b["type"] == "tool_use" {
					out.Tool = b["name"].(string)
				}
			case "content_block_delta":
				d := ev["delta"].(map[string]any)
				if d["type"] == "input_json_delta" {
					out.Input += d["partial_json"].(string)
				} else {
					out.Text += d["text"].(string)
				}
			case "message_stop":
				done = true
			}
		case Responses:
			switch ev["type"] {
			case "response.output_item.done":
				out = itemReply(ev["item"].(map[string]any))
			case "response.completed":
				done = true
			}
		default:
			for _, c := range ev["choices"].([]any) {
				d := c.(map[string]any)["delta"].(map[string]any)
				if s, ok := d["content"].(string); ok {
					out.Text += s
				}
				if calls, ok := d["tool_calls"].([]any); ok {
					f := calls[0].(map[string]any)["function"].(map[string]any)
					out.Tool = f["name"].(string)
					out.Input += f["arguments"].(string)
				}
			}
		}
	}
	if !done {
		t.Fatalf("%s: the stream ended without its closing event", api)
	}
	return out
}

func TestStepFollowsTheConversation(t *testing.T) {
	s, err := Start(testScript)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		turns int
		want  reply
	}{
		{0, reply{Tool: "Read", Input: `{"file_path":"/ws/src/api/routes.ts"}`}},
		{1, reply{Tool: "apply_patch", Input: "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"}},
		{2, reply{Text: "All done."}},
		{3, reply{Text: "All done."}}, // past the end: the final text again
	}
	for _, api := range []API{Anthropic, Responses, Chat} {
		for _, stream := range []bool{false, true} {
			for _, tt := range tests {
				want := tt.want
				if want.Tool == "apply_patch" && api != Responses {
					want.Input = "{}" // a freeform call is a function call without arguments elsewhere
				}
				got := post(t, s, api, conversation(api, tt.turns, stream, "note"))
				if got != want {
					t.Errorf("%s stream=%v after %d turns: got %+v, want %+v", api, stream, tt.turns, got, want)
				}
			}
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3*2*len(tests) {
		t.Fatalf("recorded %d requests, want %d", len(reqs), 3*2*len(tests))
	}
	for i, r := range reqs {
		if want := min(tests[i%len(tests)].turns, len(testScript)); r.Step != want || r.Seq != i {
			t.Errorf("request %d: step %d seq %d, want step %d", i, r.Step, r.Seq, want)
		}
	}
}

func TestRequestsKeepWhatTheModelWasGiven(t *testing.T) {
	s, err := Start(testScript)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const note = "<system-reminder>API-RULE</system-reminder>"
	tests := []struct {
		api        API
		system     string
		noteRole   string
		noteKind   string
		resultText string
	}{
		{Anthropic, "You are Claude.", "user", "text", "file text"},
		{Responses, "You are Codex.", "developer", "text", "Success."},
		{Chat, "You are Cline.", "user", "text", "file text"},
	}
	for _, tt := range tests {
		post(t, s, tt.api, conversation(tt.api, 1, true, note))
		reqs := s.Requests()
		r := reqs[len(reqs)-1]
		if r.API != tt.api || !r.Stream || r.Step != 1 {
			t.Errorf("%s: recorded api=%s stream=%v step=%d", tt.api, r.API, r.Stream, r.Step)
		}
		if strings.Count(r.Text(), "API-RULE") != 1 || !strings.Contains(r.Text(), tt.system) {
			t.Errorf("%s: text %q lacks the note once or the system prompt", tt.api, r.Text())
		}
		var found, result bool
		for _, p := range r.Parts {
			if p.Text == note && p.Role == tt.noteRole && p.Kind == tt.noteKind {
				found = true
			}
			if p.Kind == "tool_result" && p.Text == tt.resultText {
				result = true
			}
		}
		if !found || !result {
			t.Errorf("%s: parts %+v: note as %s/%s found=%v, tool result found=%v", tt.api, r.Parts, tt.noteRole, tt.noteKind, found, result)
		}
	}
}

func TestSideRequests(t *testing.T) {
	s, err := Start(testScript)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A request without tools (a title, a summary) gets text and takes no step.
	got := post(t, s, Anthropic, `{"model":"m","messages":[{"role":"user","content":"Name this chat."}]}`)
	if got.Tool != "" || got.Text == "" {
		t.Errorf("side request answered %+v, want text", got)
	}
	req, _ := http.NewRequest(http.MethodHead, s.URL()+"/", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD /: %v %v", resp, err)
	}
	resp, err := http.Post(s.URL()+"/v1/messages/count_tokens", "application/json", strings.NewReader(`{"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	var n map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("count_tokens: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	resp, err = http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(`not json`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: %s, want 400", resp.Status)
	}
	if reqs, model := s.Requests(), s.ModelRequests(); len(reqs) != 4 || len(model) != 0 {
		t.Errorf("recorded %d requests, %d answered with a step; want 4 and 0", len(reqs), len(model))
	}
}

func TestTurnsCountAssistantToolCallTurns(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) (parsed, error)
		body  string
		want  int
	}{
		{"anthropic, two calls in one turn", parseAnthropic, `{"messages":[{"role":"user","content":"go"},
			{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Read","input":{}},{"type":"tool_use","id":"b","name":"Read","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"},{"type":"tool_result","tool_use_id":"b","content":"y"}]}]}`, 1},
		{"anthropic, text only", parseAnthropic, `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"thinking aloud"}]}`, 0},
		{"responses, parallel calls then another", parseResponses, `{"input":[{"type":"message","role":"user","content":"go"},
			{"type":"function_call","call_id":"a","arguments":"{}"},{"type":"function_call","call_id":"b","arguments":"{}"},
			{"type":"function_call_output","call_id":"a","output":"x"},{"type":"function_call_output","call_id":"b","output":"y"},
			{"type":"reasoning","summary":[]},{"type":"custom_tool_call","call_id":"c","input":"patch"},
			{"type":"custom_tool_call_output","call_id":"c","output":"ok"}]}`, 2},
		{"chat, a call and a reply", parseChat, `{"messages":[{"role":"user","content":"go"},
			{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"read_files","arguments":"{}"}},{"id":"b","function":{"name":"editor","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"a","content":"x"},{"role":"tool","tool_call_id":"b","content":"y"},
			{"role":"assistant","content":"done"}]}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.parse([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if p.turns != tt.want {
				t.Errorf("turns = %d, want %d", p.turns, tt.want)
			}
		})
	}
}
