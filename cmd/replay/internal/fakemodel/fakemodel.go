// Package fakemodel is a scripted model server for driving real coding agents in tests. It listens
// on 127.0.0.1, speaks the wire protocols the agents use (Anthropic Messages, OpenAI Responses,
// OpenAI Chat Completions and Gemini's generateContent, each streaming or not), answers from a
// fixed script of steps and keeps every request it received, so a test can assert what the model
// was given.
//
// The server is stateless about the conversation: it chooses the step from the number of
// assistant tool-call turns already in the request, so a retried request gets the same answer.
package fakemodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// API names the wire protocol of a request.
type API string

// The protocols the server speaks.
const (
	Anthropic API = "anthropic" // POST /v1/messages (Claude Code)
	Responses API = "responses" // POST /v1/responses (Codex)
	Chat      API = "chat"      // POST /v1/chat/completions (Cline, pi)
)

// Step is one answer of the scripted model: a tool call when Tool is set, else a final text.
type Step struct {
	// Tool is the name of the tool to call, as the agent offers it.
	Tool string
	// Args is the call's JSON arguments object (a function tool).
	Args json.RawMessage
	// Freeform is the raw input of a freeform tool (the Responses API's "custom" tools, such as
	// Codex's apply_patch); when set the call is a custom_tool_call and Args is ignored.
	Freeform string
	// Text is the final answer when Tool is empty.
	Text string
}

// Call is a step that calls a function tool with args, marshalled to JSON.
func Call(tool string, args any) Step {
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("fakemodel: arguments of %s: %v", tool, err))
	}
	return Step{Tool: tool, Args: b}
}

// FreeformCall is a step that calls a freeform (custom) tool with raw input text.
func FreeformCall(tool, input string) Step { return Step{Tool: tool, Freeform: input} }

// Final is a step that ends the turn with text.
func Final(text string) Step { return Step{Text: text} }

// Part is one piece of what a request gave the model, in request order: a system prompt, the
// text of a message, a tool call or a tool result.
type Part struct {
	// Message is the index of the message (or Responses input item) the part belongs to; -1 for
	// a top-level system prompt or instructions.
	Message int
	// Role is the role of its message: system, developer, user, assistant or tool.
	Role string
	// Kind is text, tool_call or tool_result.
	Kind string
	// Text is the part's text; a tool call's arguments as JSON (or its freeform input).
	Text string
}

// Request is one request the server received.
type Request struct {
	// Seq numbers the requests from 0 in the order they arrived.
	Seq int
	// Method and Path are the HTTP method and URL path.
	Method, Path string
	// API is the protocol of a model request; empty for anything else (HEAD /, count_tokens).
	API API
	// Stream is whether the request asked for server-sent events.
	Stream bool
	// Step is the index of the script step answered, -1 when none was (a side request with no
	// tools, or not a model request). Past the script's end it is len(script).
	Step int
	// Tools are the names of the tools the request offered.
	Tools []string
	// Parts is what the model was given, in order (empty when the body did not parse).
	Parts []Part
	// Body is the raw request body.
	Body []byte
	// Received is when the request arrived (for a failing test's account of the run).
	Received time.Time
}

// Text is every part's text joined with newlines: handy for a substring search.
func (r Request) Text() string {
	var b strings.Builder
	for _, p := range r.Parts {
		b.WriteString(p.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// Server is a running fake model server.
type Server struct {
	script []Step
	ln     net.Listener
	http   *http.Server
	done   chan struct{}

	mu   sync.Mutex
	reqs []Request
}

// Start listens on a random port of 127.0.0.1 and serves script until Close.
func Start(script []Step) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake model: listen: %w", err)
	}
	s := &Server{script: script, ln: ln, done: make(chan struct{})}
	s.http = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// URL is the server's base address, http://127.0.0.1:PORT (no trailing slash).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and waits for it to finish.
func (s *Server) Close() error {
	err := s.http.Close()
	<-s.done
	return err
}

// Requests returns a copy of every request received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// ModelRequests returns the requests that were answered with a script step, in order.
func (s *Server) ModelRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Step >= 0 {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs)
	s.reqs = append(s.reqs, r)
}

// step returns the step for a conversation with turns assistant tool-call turns: past the end of
// the script, the final text of its last step (or "Done.").
func (s *Server) step(turns int) Step {
	if turns < len(s.script) {
		return s.script[turns]
	}
	if n := len(s.script); n > 0 && s.script[n-1].Tool == "" {
		return s.script[n-1]
	}
	return Final("Done.")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{Method: r.Method, Path: r.URL.Path, Step: -1, Body: body, Received: time.Now()}
	if err != nil {
		s.record(req)
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if s.serveGemini(w, r, req) {
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		s.record(req)
		writeJSON(w, map[string]int{"input_tokens": len(body) / 4})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		s.model(w, req, Anthropic, parseAnthropic)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		s.model(w, req, Responses, parseResponses)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		s.model(w, req, Chat, parseChat)
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && path == ""):
		s.record(req)
		w.WriteHeader(http.StatusOK)
	default:
		s.record(req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"type":"not_found_error","message":"fake model: no route %s %s"}}`, r.Method, r.URL.Path)
	}
}

// parsed is what a protocol's parser makes of a request body.
type parsed struct {
	stream bool
	model  string
	tools  []string
	parts  []Part
	turns  int  // assistant tool-call turns already in the conversation
	sse    bool // a Gemini stream asked for as server-sent events (alt=sse)
}

func (s *Server) model(w http.ResponseWriter, req Request, api API, parse func([]byte) (parsed, error)) {
	req.API = api
	p, err := parse(req.Body)
	if err != nil {
		s.record(req)
		http.Error(w, fmt.Sprintf("fake model: %s request: %v", api, err), http.StatusBadRequest)
		return
	}
	req.Stream, req.Tools, req.Parts = p.stream, p.tools, p.parts
	st := Final("OK.")
	if len(p.tools) > 0 {
		req.Step = min(p.turns, len(s.script))
		st = s.step(p.turns)
	}
	s.record(req)
	a := answer{Step: st, n: p.turns + 1, model: p.model}
	switch api {
	case Anthropic:
		a.anthropic(w, p.stream)
	case Responses:
		a.responses(w, p.stream)
	case Chat:
		a.chat(w, p.stream)
	case Gemini:
		a.gemini(w, p.stream, p.sse)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// errNotObject reports a body that is not a JSON object.
var errNotObject = errors.New("body is not a JSON object")
