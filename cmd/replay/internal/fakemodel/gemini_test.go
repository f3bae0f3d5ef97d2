package fakemodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// geminiConversation is a generateContent body with turns earlier function-call turns, each
// function response's output carrying note, as Gemini CLI sends it.
func geminiConversation(turns int, note string) string {
	contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Tidy up."}}}}
	for range turns {
		contents = append(contents,
			map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{
				"name": "read_file", "args": map[string]any{"file_path": "/ws/a.ts"}},
				"thoughtSignature": "skip_thought_signature_validator"}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{
				"name": "read_file", "id": "read_file_1", "response": map[string]any{"output": "file text" + note}}}}})
	}
	b, _ := json.Marshal(map[string]any{
		"contents":          contents,
		"systemInstruction": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "You are Gemini CLI."}}},
		"tools":             []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "read_file"}, map[string]any{"name": "write_file"}}}},
		"generationConfig":  map[string]any{"temperature": 0},
	})
	return string(b)
}

// geminiReply reads a candidate's first part as a client does.
func geminiReply(t *testing.T, chunk map[string]any) reply {
	t.Helper()
	cands, _ := chunk["candidates"].([]any)
	if len(cands) != 1 {
		t.Fatalf("chunk has %d candidates, want 1: %v", len(cands), chunk)
	}
	c := cands[0].(map[string]any)
	if c["finishReason"] != "STOP" {
		t.Errorf("finishReason %v, want STOP", c["finishReason"])
	}
	content := c["content"].(map[string]any)
	if content["role"] != "model" {
		t.Errorf("content role %v, want model", content["role"])
	}
	part := content["parts"].([]any)[0].(map[string]any)
	if fc, ok := part["functionCall"].(map[string]any); ok {
		args, _ := json.Marshal(fc["args"])
		return reply{Tool: fc["name"].(string), Input: string(args)}
	}
	return reply{Text: part["text"].(string)}
}

// postGemini posts body to the model's method (with ?alt=sse when sse) and reads the answer in
// the shape the method and alt call for: one object, events, or a JSON array of chunks.
func postGemini(t *testing.T, s *Server, method string, sse bool, body string) reply {
	t.Helper()
	url := s.URL() + "/v1beta/models/gemini-2.5-flash:" + method
	if sse {
		url += "?alt=sse"
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s: %s", method, resp.Status, b)
	}
	ctype := resp.Header.Get("Content-Type")
	switch {
	case sse:
		if !strings.HasPrefix(ctype, "text/event-stream") {
			t.Fatalf("alt=sse answered %s", ctype)
		}
		var chunks []map[string]any
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					t.Fatalf("event is not JSON: %v: %s", err, data)
				}
				chunks = append(chunks, m)
			}
		}
		if len(chunks) != 1 {
			t.Fatalf("%d events, want 1", len(chunks))
		}
		return geminiReply(t, chunks[0])
	case method == "streamGenerateContent":
		var chunks []map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&chunks); err != nil || len(chunks) != 1 {
			t.Fatalf("a stream without alt=sse is not a JSON array of one chunk: %v, %d chunks", err, len(chunks))
		}
		return geminiReply(t, chunks[0])
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return geminiReply(t, m)
}

func TestGeminiFollowsTheConversation(t *testing.T) {
	s, err := Start([]Step{
		Call("read_file", map[string]string{"file_path": "/ws/a.ts"}),
		Call("write_file", map[string]string{"file_path": "/ws/b.ts", "content": "b"}),
		Final("All done."),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		turns int
		want  reply
	}{
		{0, reply{Tool: "read_file", Input: `{"file_path":"/ws/a.ts"}`}},
		{1, reply{Tool: "write_file", Input: `{"content":"b","file_path":"/ws/b.ts"}`}},
		{2, reply{Text: "All done."}},
		{3, reply{Text: "All done."}},
	}
	modes := []struct {
		method string
		sse    bool
	}{{"streamGenerateContent", true}, {"streamGenerateContent", false}, {"generateContent", false}}
	for _, m := range modes {
		for _, tt := range tests {
			if got := postGemini(t, s, m.method, m.sse, geminiConversation(tt.turns, "")); got != tt.want {
				t.Errorf("%s sse=%v after %d turns: got %+v, want %+v", m.method, m.sse, tt.turns, got, tt.want)
			}
		}
	}
	reqs := s.ModelRequests()
	if len(reqs) != len(modes)*len(tests) {
		t.Fatalf("%d model requests, want %d", len(reqs), len(modes)*len(tests))
	}
	for i, r := range reqs {
		wantStream := modes[i/len(tests)].method == "streamGenerateContent"
		if r.API != Gemini || r.Stream != wantStream || r.Step != min(tests[i%len(tests)].turns, 3) {
			t.Errorf("request %d: api %s stream %v step %d", i, r.API, r.Stream, r.Step)
		}
		if strings.Join(r.Tools, ",") != "read_file,write_file" {
			t.Errorf("request %d: tools %q", i, r.Tools)
		}
	}
}

func TestGeminiRequestsKeepWhatTheModelWasGiven(t *testing.T) {
	s, err := Start([]Step{Call("read_file", map[string]string{"file_path": "/ws/a.ts"}), Final("ok")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const note = "\n\n<hook_context>API-RULE</hook_context>"
	postGemini(t, s, "streamGenerateContent", true, geminiConversation(1, note))
	r := s.ModelRequests()[0]
	want := []Part{
		{Message: -1, Role: "system", Kind: "text", Text: "You are Gemini CLI."},
		{Message: 0, Role: "user", Kind: "text", Text: "Tidy up."},
		{Message: 1, Role: "assistant", Kind: "tool_call", Text: `{"file_path":"/ws/a.ts"}`},
		{Message: 2, Role: "user", Kind: "tool_result", Text: "file text" + note},
	}
	if len(r.Parts) != len(want) {
		t.Fatalf("parts %+v, want %+v", r.Parts, want)
	}
	for i := range want {
		if r.Parts[i] != want[i] {
			t.Errorf("part %d: %+v, want %+v", i, r.Parts[i], want[i])
		}
	}
	if strings.Count(r.Text(), "API-RULE") != 1 {
		t.Errorf("text %q lacks the note once", r.Text())
	}
}

func TestGeminiSideRoutes(t *testing.T) {
	s, err := Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL()+"/v1beta/models/gemini-2.5-flash:countTokens", "application/json",
		strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hello"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var n struct{ TotalTokens int }
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil || resp.StatusCode != http.StatusOK || n.TotalTokens <= 0 {
		t.Errorf("countTokens: %s %v %+v", resp.Status, err, n)
	}
	resp.Body.Close()
	resp, err = http.Get(s.URL() + "/v1beta/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Models []struct{ Name string } }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Models) == 0 {
		t.Errorf("models list: %v %+v", err, list)
	}
	resp.Body.Close()
	// A request without tools (Gemini CLI's routing and summary requests) takes no step.
	postGemini(t, s, "generateContent", false, `{"contents":[{"role":"user","parts":[{"text":"Rate this."}]}]}`)
	resp, err = http.Post(s.URL()+"/v1beta/models/m:streamGenerateContent", "application/json", strings.NewReader("not json"))
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

func TestGeminiMethod(t *testing.T) {
	tests := []struct {
		path, model, method string
		ok                  bool
	}{
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini-2.5-flash", "streamGenerateContent", true},
		{"/v1/models/m:countTokens", "m", "countTokens", true},
		{"/v1beta/models", "", "", false},
		{"/v1/chat/completions", "", "", false},
		{"/v1beta/models/:generateContent", "", "", false},
	}
	for _, tt := range tests {
		m, meth, ok := geminiMethod(tt.path)
		if ok != tt.ok || (ok && (m != tt.model || meth != tt.method)) {
			t.Errorf("geminiMethod(%q) = %q %q %v", tt.path, m, meth, ok)
		}
	}
}
