package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tasklog/tasklog/events/agentlog"
)

// HTTPHookPath is the path prefix of the hooks an agent posts over HTTP: POST
// /hook/<agent> (qwen, claude-code, …), the hook payload as the body.
const HTTPHookPath = "/hook/"

// DefaultHTTPBudget is how long the server gives an HTTP hook to be recorded and answered, as
// 'replay hook' gives a command hook.
const DefaultHTTPBudget = 5 * time.Second

// maxHTTPPayload is the largest hook payload read over HTTP, as a command hook reads on stdin.
const maxHTTPPayload = 32 << 20

// HTTPOptions configure the HTTP hook listener.
type HTTPOptions struct {
	// Token is the secret every request carries as "Authorization: Bearer <token>"; a request
	// without it is refused (401), so no other local user can write to the log. Required.
	Token string
	// Budget bounds recording and deciding one hook; zero means DefaultHTTPBudget.
	Budget time.Duration
	// Unrecorded receives a payload the server could not record (the database was held by
	// another process past the budget, the disk refused the write, the server was shutting
	// down): 'replay serve' spools it for the next hook, as 'replay hook' does. nil drops it.
	Unrecorded func(agent string, payload []byte, err error)
	// Pages answers the requests outside HTTPHookPath (the read-only web app, which checks
	// its own Host); nil answers them 404.
	Pages http.Handler
}

// ErrHTTPToken is returned by ServeHTTPHooks without a token.
var ErrHTTPToken = errors.New("an HTTP hook listener needs a token")

// ServeHTTPHooks answers agents' HTTP hooks on ln (a listener of 127.0.0.1) until the server
// stops: each request is recorded, decided and answered as OpHook answers a hook on the socket,
// the dialect's reply as a JSON body. Whatever goes wrong, the agent gets status 200 and the
// neutral reply ({}), and goes on: the fault is in the server's log, and a payload that could
// be recorded later goes to HTTPOptions.Unrecorded. Only a request without the token (401), not
// a POST (405), or to another path or for an agent 'replay hook' does not read (404) gets an
// error status; the other paths are HTTPOptions.Pages'. It returns when the listener fails or
// the server shuts down.
func (s *Server) ServeHTTPHooks(ln net.Listener, opts HTTPOptions) error {
	if opts.Token == "" {
		ln.Close()
		return ErrHTTPToken
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultHTTPBudget
	}
	hs := &http.Server{
		Handler:           &httpHooks{s: s, opts: opts},
		ReadHeaderTimeout: messageReadTimeout,
		ReadTimeout:       messageReadTimeout,
		IdleTimeout:       s.opts.ConnIdle,
		ErrorLog:          s.log,
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.httpSrv = append(s.httpSrv, hs)
	s.mu.Unlock()
	s.log.Printf("answering HTTP hooks on http://%s%s<agent>", ln.Addr(), HTTPHookPath)
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// closeHTTP stops the HTTP listeners: no new request is read; the ones being answered finish
// (they are counted in flight). The caller holds mu.
func (s *Server) closeHTTP() {
	for _, hs := range s.httpSrv {
		hs.Close()
	}
}

type httpHooks struct {
	s    *Server
	opts HTTPOptions
}

func (h *httpHooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	agent, ok := strings.CutPrefix(r.URL.Path, HTTPHookPath)
	switch {
	case !ok && h.opts.Pages != nil:
		h.opts.Pages.ServeHTTP(w, r)
		return
	case !ok || agent == "" || strings.Contains(agent, "/"):
		http.NotFound(w, r)
		return
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a hook payload", http.StatusMethodNotAllowed)
		return
	case !h.authorized(r.Header.Get("Authorization")):
		http.Error(w, "no or wrong bearer token", http.StatusUnauthorized)
		return
	case !knownHookAgent(agent):
		http.Error(w, "no agent "+agent+" here: POST to "+HTTPHookPath+"AGENT with an agent 'replay hook' reads", http.StatusNotFound)
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, maxHTTPPayload+1))
	if err == nil && len(payload) > maxHTTPPayload {
		err = errors.New("the payload is larger than 32 MiB")
	}
	var reply []byte
	if err != nil {
		h.s.log.Printf("HTTP hook %s: read the payload: %v", agent, err)
	} else {
		reply = h.answer(r.Context(), agent, payload)
	}
	w.Header().Set("Content-Type", "application/json")
	if len(reply) == 0 {
		reply = []byte("{}\n")
	}
	w.Write(reply)
}

// knownHookAgent reports whether 'replay hook' reads agent's payloads.
func knownHookAgent(agent string) bool {
	_, err := agentlog.ParseHookAgent(agent)
	return err == nil
}

// authorized compares the bearer token in constant time.
func (h *httpHooks) authorized(header string) bool {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(tok), []byte(h.opts.Token)) == 1
}

// answer records and decides one payload as OpHook does and returns the reply; nil for the
// neutral reply. The request's own context is not used: an agent that gives up waiting does
// not cut a recording half-way.
func (h *httpHooks) answer(rctx context.Context, agent string, payload []byte) []byte {
	s := h.s
	if !s.begin() {
		h.unrecorded(agent, payload, errors.New("the server is shutting down"))
		return nil
	}
	defer s.inflight.Done()
	s.touch()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(rctx), h.opts.Budget)
	defer cancel()
	db, err := s.acquire(ctx)
	if err != nil {
		h.unrecorded(agent, payload, err)
		return nil
	}
	defer s.release()
	res, err := s.hook(ctx, db, &Request{Op: OpHook, Agent: agent, Payload: payload})
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == CodeBadRequest {
			// Not a hook payload: nothing to record, now or later.
			s.log.Printf("HTTP hook %s: %v", agent, err)
			return nil
		}
		h.unrecorded(agent, payload, err)
		return nil
	}
	if res.Reply == "" {
		return agentlog.NeutralReply(agentlog.Agent(agent), "")
	}
	return []byte(res.Reply)
}

func (h *httpHooks) unrecorded(agent string, payload []byte, err error) {
	h.s.log.Printf("HTTP hook %s: %v", agent, err)
	if h.opts.Unrecorded != nil {
		h.opts.Unrecorded(agent, payload, err)
	}
}

// touch restarts the idle period: an HTTP hook is use of the server as a connection is.
func (s *Server) touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle != nil && !s.closing {
		s.idle.Reset(s.opts.Idle)
	}
}
