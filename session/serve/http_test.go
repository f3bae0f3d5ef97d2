package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

const testToken = "secret-token"

// startHTTP serves HTTP hooks of s on 127.0.0.1 and returns the base URL.
func startHTTP(t testing.TB, s *Server, opts HTTPOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Token == "" {
		opts.Token = testToken
	}
	go s.ServeHTTPHooks(ln, opts)
	return "http://" + ln.Addr().String()
}

// postHook posts a payload as an agent's HTTP hook does and returns the status and body.
func postHook(t testing.TB, c *http.Client, url, token string, payload []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// qwenHooks are a Qwen Code session's prompt and its read of src/api/routes.ts, as qwen posts
// them (events/agentlog/testdata/hooks/qwen).
func qwenHooks(ws, sid string) [][]byte {
	return [][]byte{
		fmt.Appendf(nil, `{"session_id":%q,"transcript_path":"/home/dev/.qwen/projects/x/chats/%s.jsonl","cwd":%q,"hook_event_name":"UserPromptSubmit","prompt_id":"%s########0","prompt":"Add a health check."}`, sid, sid, ws, sid),
		fmt.Appendf(nil, `{"session_id":%q,"transcript_path":"/home/dev/.qwen/projects/x/chats/%s.jsonl","cwd":%q,"hook_event_name":"PostToolUse","prompt_id":"%s########0","tool_name":"read_file","tool_input":{"file_path":%q},"tool_response":{"llmContent":"x"},"tool_use_id":"toolu_1","tool_call_id":"call_1"}`, sid, sid, ws, sid, filepath.Join(ws, "src/api/routes.ts")),
	}
}

// TestHTTPHookRecordsAsTheSocket: the hooks of a session posted over HTTP are answered with the
// rules in the dialect's reply, and leave the same events in the log, in the same order and with
// the same payloads, as the same hooks handed over the socket.
func TestHTTPHookRecordsAsTheSocket(t *testing.T) {
	ws := workspace(t)
	ctx := context.Background()
	viaHTTP, dbHTTP := start(t, Options{})
	url := startHTTP(t, viaHTTP, HTTPOptions{}) + "/hook/qwen"
	var replies []string
	for _, p := range qwenHooks(ws, "s1") {
		code, body := postHook(t, http.DefaultClient, url, testToken, p)
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, body)
		}
		replies = append(replies, body)
	}
	if !strings.Contains(replies[1], "additionalContext") || !strings.Contains(replies[1], "API handlers return JSON errors") {
		t.Errorf("the read's reply does not carry the src/api rule:\n%s", replies[1])
	}
	viaSocket, dbSocket := start(t, Options{})
	c := dial(t, viaSocket)
	for _, p := range qwenHooks(ws, "s1") {
		if _, err := c.Hook(ctx, "qwen", p); err != nil {
			t.Fatal(err)
		}
	}
	task := agentlog.TaskID(agentlog.Qwen, "s1")
	got, want := logOf(t, viaHTTP, dbHTTP, task), logOf(t, viaSocket, dbSocket, task)
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("%d events over HTTP, %d over the socket", len(got), len(want))
	}
	for i := range got {
		if got[i].Type != want[i].Type || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("event %d: over HTTP %s %s\nover the socket %s %s", i+1, got[i].Type, got[i].Data, want[i].Type, want[i].Data)
		}
	}
	delivered := false
	for _, ev := range got {
		delivered = delivered || ev.Type == events.TypeDelivery
	}
	if !delivered {
		t.Errorf("no delivery recorded over HTTP")
	}
}

// TestHTTPHookRefuses: a request without the token, with another token, not a POST or to
// another path gets an error status and records nothing; a body that is not a hook payload gets
// the neutral reply with status 200, as a command hook would.
func TestHTTPHookRefuses(t *testing.T) {
	ws := workspace(t)
	s, db := start(t, Options{})
	base := startHTTP(t, s, HTTPOptions{})
	payload := qwenHooks(ws, "s1")[0]
	for _, tc := range []struct {
		name, path, token string
		want              int
	}{
		{"no token", "/hook/qwen", "", http.StatusUnauthorized},
		{"wrong token", "/hook/qwen", "secret-tokeN", http.StatusUnauthorized},
		{"no agent", "/hook/", testToken, http.StatusNotFound},
		{"other path", "/hooks/qwen", testToken, http.StatusNotFound},
		{"unknown agent", "/hook/nobody", testToken, http.StatusNotFound},
	} {
		if code, body := postHook(t, http.DefaultClient, base+tc.path, tc.token, payload); code != tc.want {
			t.Errorf("%s: status %d, want %d: %s", tc.name, code, tc.want, body)
		}
	}
	resp, err := http.Get(base + "/hook/qwen")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
	if code, body := postHook(t, http.DefaultClient, base+"/hook/qwen", testToken, []byte("not json")); code != http.StatusOK || body != "{}\n" {
		t.Errorf("a body that is no payload: status %d %q, want 200 and the neutral reply", code, body)
	}
	s.Shutdown()
	<-s.Done()
	d, err := store.Open(db, &store.Options{ReadOnly: true, Timeout: slow})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for ev, err := range d.Events(context.Background(), agentlog.TaskID(agentlog.Qwen, "s1"), 1) {
		if err == nil {
			t.Errorf("a refused request recorded %s", ev.Type)
		}
		break
	}
}

// TestHTTPHookFailsOpen: while another process holds the database past the hook's budget, the
// agent gets the neutral reply with status 200 at once, and the payload goes to Unrecorded for
// the next hook to record.
func TestHTTPHookFailsOpen(t *testing.T) {
	ws := workspace(t)
	s, dbPath := start(t, Options{})
	var mu sync.Mutex
	var spooled [][]byte
	url := startHTTP(t, s, HTTPOptions{Budget: 100 * time.Millisecond, Unrecorded: func(agent string, payload []byte, err error) {
		mu.Lock()
		defer mu.Unlock()
		if agent == "qwen" && err != nil {
			spooled = append(spooled, payload)
		}
	}}) + "/hook/qwen"
	holder, err := store.Open(dbPath, &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	payload := qwenHooks(ws, "s1")[1]
	code, body := postHook(t, http.DefaultClient, url, testToken, payload)
	if code != http.StatusOK || body != "{}\n" {
		t.Errorf("status %d %q, want 200 and the neutral reply", code, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(spooled) != 1 || !bytes.Equal(spooled[0], payload) {
		t.Errorf("unrecorded payloads %q, want the hook's", spooled)
	}
}

// TestHTTPHookShutdown: the server stops its HTTP listener with the socket.
func TestHTTPHookShutdown(t *testing.T) {
	s, _ := start(t, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTPHooks(ln, HTTPOptions{Token: testToken}) }()
	addr := "http://" + ln.Addr().String() + "/hook/qwen"
	deadline := time.Now().Add(slow)
	for {
		req, _ := http.NewRequest(http.MethodGet, addr, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the HTTP listener never answered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Shutdown()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeHTTPHooks: %v", err)
		}
	case <-time.After(slow):
		t.Fatal("ServeHTTPHooks did not return after Shutdown")
	}
	if err := s.ServeHTTPHooks(ln, HTTPOptions{}); err != ErrHTTPToken {
		t.Errorf("no token: %v, want ErrHTTPToken", err)
	}
}

// TestHTTPHookClaudeCode: the path names the dialect's hint, as 'replay hook AGENT' does: Claude
// Code's payloads posted to /hook/claude-code are answered in its dialect.
func TestHTTPHookClaudeCode(t *testing.T) {
	ws := workspace(t)
	s, _ := start(t, Options{})
	url := startHTTP(t, s, HTTPOptions{}) + "/hook/claude-code"
	code, body := postHook(t, http.DefaultClient, url, testToken, preToolUse(ws, "c1", "toolu_1"))
	if code != http.StatusOK || !strings.Contains(body, `"hookEventName":"PreToolUse"`) || !strings.Contains(body, "API handlers return JSON errors") {
		t.Errorf("status %d, want Claude Code's reply with the src/api rule:\n%s", code, body)
	}
}

// TestHTTPHookPages: with HTTPOptions.Pages, one listener answers hooks under /hook/ (token
// and all) and gives every other path to the pages, which see no hook's token.
func TestHTTPHookPages(t *testing.T) {
	ws := workspace(t)
	s, _ := start(t, Options{})
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "page %s %s", r.Method, r.URL.Path)
	})
	base := startHTTP(t, s, HTTPOptions{Pages: pages})
	for _, path := range []string{"/", "/task/x", "/hooks/qwen"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "page GET " + path; resp.StatusCode != http.StatusOK || string(b) != want {
			t.Errorf("GET %s: %d %q, want the page %q", path, resp.StatusCode, b, want)
		}
	}
	if code, _ := postHook(t, http.DefaultClient, base+"/hook/qwen", "", qwenHooks(ws, "s1")[0]); code != http.StatusUnauthorized {
		t.Errorf("a hook without the token beside pages: status %d, want 401", code)
	}
	if code, body := postHook(t, http.DefaultClient, base+"/hook/qwen", testToken, qwenHooks(ws, "s1")[0]); code != http.StatusOK || strings.HasPrefix(body, "page") {
		t.Errorf("a hook beside pages: status %d %q, want the hook's reply", code, body)
	}
}
