package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/session/report"
	"github.com/tasklog/tasklog/store"
)

// storeSource is a Source over a store the test writes: Bump tells the event streams.
type storeSource struct {
	db store.Store
	mu sync.Mutex
	ch chan struct{}
}

func (s *storeSource) View(_ context.Context, fn func(store.Store) error) error { return fn(s.db) }

func (s *storeSource) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *storeSource) Bump() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

func openDB(t testing.TB) store.Store {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "t.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// recordTask records a task: the prompt, then turns tool calls each followed by a decision.
func recordTask(t testing.TB, db store.Store, task uuid.UUID, prompt string, turns int, at time.Time) *session.Session {
	t.Helper()
	ctx := context.Background()
	ws := fstest.MapFS{
		".clinerules/general.md": {Data: []byte("Run the tests.\n")},
		".clinerules/api.md":     {Data: []byte("---\npaths: [\"src/api/**\"]\n---\nValidate input.\n")},
	}
	s, err := session.Open(ctx, db, task, session.Options{
		Roots:   []session.Root{{Path: "/work/shop", FS: ws}},
		Runtime: events.Runtime{Name: "my-agent", Version: "1.0"},
		Now:     func() time.Time { return at },
		IDs:     events.NewIDSource(rand.New(rand.NewSource(int64(task[0])))),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.UserMessage(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	for i := range turns {
		turn(t, s, i)
	}
	return s
}

func turn(t testing.TB, s *session.Session, i int) {
	t.Helper()
	ctx := context.Background()
	params, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("src/api/f%d.ts", i)})
	if _, err := s.ToolCall(ctx, "read_file", fmt.Sprintf("call_%d", i), params); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx); err != nil {
		t.Fatal(err)
	}
}

const hostile = "\u202egnp.exe <script>alert(1)</script><img src=x onerror=alert(2)>"

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1:8080"
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// TestPagesEscape: a prompt holding markup and a right-to-left override shows as text on the
// list and on the task page: no element of it, the override as \u202e.
func TestPagesEscape(t *testing.T) {
	db := openDB(t)
	task := uuid.MustParse("0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c")
	recordTask(t, db, task, hostile, 2, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	h := Handler(&storeSource{db: db})
	for _, path := range []string{"/", "/task/" + task.String()} {
		code, page := get(t, h, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, code, page)
		}
		for _, bad := range []string{"<script>alert", "<img src=x", "\u202e"} {
			if strings.Contains(page, bad) {
				t.Errorf("GET %s: the page holds %q from the prompt as is", path, bad)
			}
		}
		if !strings.Contains(page, `\u202egnp.exe &lt;script&gt;alert(1)&lt;/script&gt;`) {
			t.Errorf("GET %s: the prompt is not shown escaped", path)
		}
	}
}

// TestList: the tasks newest first, with their counts.
func TestList(t *testing.T) {
	db := openDB(t)
	older, newer := uuid.MustParse("11111111-1111-4111-8111-111111111111"), uuid.MustParse("22222222-2222-4222-8222-222222222222")
	recordTask(t, db, newer, "the newer task", 3, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	recordTask(t, db, older, "the older task", 1, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	tasks, err := Tasks(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0].ID != newer.String() || tasks[1].ID != older.String() {
		t.Fatalf("tasks %+v, want the newer first", tasks)
	}
	got := tasks[0]
	if got.Title != "the newer task" || got.Project != "shop" || got.Agent != "my-agent 1.0" || got.Prompts != 1 || got.Requests != 3 {
		t.Errorf("the newer task: %+v", got)
	}
	code, page := get(t, Handler(&storeSource{db: db}), "/")
	if code != http.StatusOK || strings.Index(page, "the newer task") > strings.Index(page, "the older task") {
		t.Errorf("the list page (%d) does not show the newer task first", code)
	}
}

// TestSecurityHeaders: every page (the list, a task, the rules) is sent with a content
// security policy that lets nothing in from another origin, and is not framed elsewhere.
func TestSecurityHeaders(t *testing.T) {
	db := openDB(t)
	task := uuid.MustParse("0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c")
	recordTask(t, db, task, "go", 1, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	h := Handler(&storeSource{db: db})
	for _, path := range []string{"/", "/task/" + task.String(), "/rules"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "127.0.0.1:8080"
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", path, rec.Code)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "http") || strings.Contains(csp, "*") {
			t.Errorf("%s: Content-Security-Policy %q, want default-src 'self' and no other origin", path, csp)
		}
		if got := rec.Header().Get("X-Frame-Options"); got != "SAMEORIGIN" {
			t.Errorf("%s: X-Frame-Options %q, want SAMEORIGIN", path, got)
		}
	}
}

// TestRefusals: a task that is not there, a Host that is not loopback, a non-loopback address.
func TestRefusals(t *testing.T) {
	h := Handler(&storeSource{db: openDB(t)})
	if code, _ := get(t, h, "/task/0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c"); code != http.StatusNotFound {
		t.Errorf("a task not in the store: %d, want 404", code)
	}
	if code, _ := get(t, h, "/task/not-a-uuid"); code != http.StatusNotFound {
		t.Errorf("not a task id: %d, want 404", code)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "attacker.example:8080"
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("Host attacker.example: %d, want %d", rec.Code, http.StatusMisdirectedRequest)
	}
	for _, tt := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8080", true}, {"[::1]:0", true}, {"localhost:9000", true},
		{"0.0.0.0:8080", false}, {":8080", false}, {"192.168.1.4:8080", false}, {"8080", false},
	} {
		err := CheckAddr(tt.addr)
		if (err == nil) != tt.ok {
			t.Errorf("CheckAddr(%q) = %v, want ok %v", tt.addr, err, tt.ok)
		}
		if !tt.ok && err != nil && strings.Contains(tt.addr, ":") && tt.addr != "8080" && !errors.Is(err, ErrNotLoopback) {
			t.Errorf("CheckAddr(%q) = %v, want ErrNotLoopback", tt.addr, err)
		}
	}
}

// eventsServer serves the web app over a store holding one task of one turn: the task, its
// session, the source (Bump it after appending), the server (closed with the test) and a
// function giving the task's head.
func eventsServer(t *testing.T) (uuid.UUID, *session.Session, *storeSource, *httptest.Server, func() uint64) {
	t.Helper()
	db := openDB(t)
	task := uuid.MustParse("0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c")
	s := recordTask(t, db, task, "go", 1, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	src := &storeSource{db: db}
	srv := httptest.NewServer(Handler(src))
	t.Cleanup(srv.Close)
	head := func() uint64 {
		h, err := db.Head(task)
		if err != nil {
			t.Fatal(err)
		}
		return h.Seq
	}
	return task, s, src, srv, head
}

// TestEvents: the stream sends an event each time the task's log grew past what the client has
// (since, or Last-Event-ID on a reconnect), its id the log's head, and nothing for a change
// that left the task's log as it was.
func TestEvents(t *testing.T) {
	task, s, src, srv, head := eventsServer(t)
	open := func(query, lastID string) (*bufio.Reader, func()) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/task/"+task.String()+"/events"+query, nil)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		return bufio.NewReader(resp.Body), func() { cancel(); resp.Body.Close() }
	}
	// next reads the stream up to the next event (comments skipped) and returns its lines.
	next := func(r *bufio.Reader) []string {
		var lines []string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("the stream ended: %v (after %q)", err, lines)
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "" && len(lines) > 0:
				return lines
			case line == "" || strings.HasPrefix(line, ":") || strings.HasPrefix(line, "retry:"):
			default:
				lines = append(lines, line)
			}
		}
	}
	// A page at the head: the first event is the next growth, not a replay of the present.
	start := head()
	r, stop := open(fmt.Sprintf("?since=%d", start), "")
	src.Bump() // a change elsewhere: nothing to send
	turn(t, s, 1)
	src.Bump()
	// The first bump may wake the stream while the turn is still appending: it may then send
	// the head it saw, and then the final one; ids only grow, and the last is the head.
	want := []string{fmt.Sprintf("id: %d", head()), fmt.Sprintf("data: %d", head())}
	for last := start; ; {
		got := next(r)
		var id uint64
		if len(got) == 2 {
			fmt.Sscanf(got[0], "id: %d", &id)
		}
		if id <= last || got[1] != fmt.Sprintf("data: %d", id) {
			t.Fatalf("after a turn: %q after id %d, want growing ids up to %q", got, last, want)
		}
		if strings.Join(got, "|") == strings.Join(want, "|") {
			break
		}
		last = id
	}
	stop()
	// A browser reconnecting with the id it saw before the last turn gets one event at once;
	// Last-Event-ID wins over the page's since.
	seen := head()
	turn(t, s, 2)
	r, stop = open(fmt.Sprintf("?since=%d", start), fmt.Sprint(seen))
	want = []string{fmt.Sprintf("id: %d", head()), fmt.Sprintf("data: %d", head())}
	if got := next(r); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("reconnect after a turn missed: %q, want %q", got, want)
	}
	stop()
	// Without since or an id, the stream says where it starts, as a "head" event.
	r, stop = open("", "")
	if got := next(r); len(got) != 3 || got[0] != "event: head" || got[1] != fmt.Sprintf("id: %d", head()) {
		t.Errorf("a fresh stream starts with %q, want a head event at %d", got, head())
	}
	stop()
}

// TestRules: the rules page counts each rule's requests in the prompt; a rule's page lists its
// tasks, their titles escaped.
func TestRules(t *testing.T) {
	db := openDB(t)
	task := uuid.MustParse("0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c")
	s := recordTask(t, db, task, hostile, 3, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	rules, err := Rules(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	var api *Rule
	for i := range rules {
		if rules[i].Name == "api" {
			api = &rules[i]
		}
	}
	if len(rules) != 2 || api == nil {
		t.Fatalf("rules %+v, want general and api", rules)
	}
	if api.Requests != 3 || api.Applied != 3 || len(api.Uses) != 1 || api.Uses[0].First.Request != 1 || api.Uses[0].Last.Request != 3 {
		t.Errorf("api: %+v, want in the prompt at the 3 requests of the task, first 1 and last 3", api)
	}
	h := Handler(&storeSource{db: db})
	code, page := get(t, h, "/rules")
	// The template writes the query's escapes in lower case.
	link := strings.ToLower(`<a href="/rule?id=` + url.QueryEscape(api.ID) + `">api</a>`)
	if code != http.StatusOK || !strings.Contains(strings.ToLower(page), link) {
		t.Errorf("/rules (%d) does not link the api rule:\n%s", code, page)
	}
	code, page = get(t, h, "/rule?id="+url.QueryEscape(api.ID))
	if code != http.StatusOK {
		t.Fatalf("/rule: %d\n%s", code, page)
	}
	if !strings.Contains(page, "in the prompt at 3 of 3 requests") || !strings.Contains(page, `<a href="/task/`+task.String()+`">`) {
		t.Errorf("the api rule's page lacks its counts or its task:\n%s", page)
	}
	for _, bad := range []string{"<script>alert", "<img src=x", "\u202e"} {
		if strings.Contains(page, bad) {
			t.Errorf("the rule's page holds %q from the prompt as is", bad)
		}
	}
	if code, _ := get(t, h, "/rule?id=nope"); code != http.StatusNotFound {
		t.Errorf("/rule?id=nope: %d, want 404", code)
	}
	// The handler keeps what it read by the log's length: a turn more is read.
	turn(t, s, 3)
	if _, page = get(t, h, "/rule?id="+url.QueryEscape(api.ID)); !strings.Contains(page, "in the prompt at 4 of 4 requests") {
		t.Errorf("after a fourth request the api rule's page still says %q", regexp.MustCompile(`in the prompt at \d+ of \d+ requests`).FindString(page))
	}
	if _, page = get(t, h, "/"); !strings.Contains(page, `data-label="requests">4<`) {
		t.Errorf("after a fourth request the list does not count it")
	}
}

// TestWaitChange: a stream waiting for a change sends a keep-alive at every tick, not only the
// first, and ends with its request.
func TestWaitChange(t *testing.T) {
	changed, tick := make(chan struct{}), make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	kept := make(chan bool)
	done := make(chan bool)
	go func() { done <- waitChange(ctx, changed, tick, func() { kept <- true }) }()
	for range 3 {
		tick <- time.Time{}
		<-kept
	}
	close(changed)
	if !<-done {
		t.Errorf("waitChange after a change = false, want true")
	}
	go func() { done <- waitChange(ctx, make(chan struct{}), tick, func() {}) }()
	cancel()
	if <-done {
		t.Errorf("waitChange after the request ended = true, want false")
	}
}

// recordOrigin records a task of agent on machine for user, with a prompt and a request.
func recordOrigin(t *testing.T, db store.Store, task uuid.UUID, agent, machine, user, prompt string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	ev, err := events.New(&events.TaskStarted{Roots: []string{"/work/" + agent}, Runtime: events.Runtime{Name: agent}, Machine: machine, User: user})
	if err != nil {
		t.Fatal(err)
	}
	ev.Time = at
	s, err := session.Open(ctx, db, task, session.Options{Started: &ev, Now: func() time.Time { return at },
		Roots: []session.Root{{Path: "/work/" + agent, FS: fstest.MapFS{"AGENTS.md": {Data: []byte("Be brief.\n")}}}},
		IDs:   events.NewIDSource(rand.New(rand.NewSource(int64(task[0]))))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.UserMessage(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestListFilters: the list keeps the tasks of the project, agent, machine and user the URL's
// query names, and those whose title holds its q; each column links to its filter, and a
// hostile machine name and filter value show as text.
func TestListFilters(t *testing.T) {
	db := openDB(t)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tasks := []struct {
		id                           string
		agent, machine, user, prompt string
	}{
		{"a1111111-1111-4111-8111-111111111111", "codex", "build-1", "ana", "Fix the banner"},
		{"a2222222-2222-4222-8222-222222222222", "codex", "laptop-bo", "bo", "Write the changelog"},
		{"a3333333-3333-4333-8333-333333333333", "claude-code", "build-1", "bo", "Add a health endpoint"},
		{"a4444444-4444-4444-8444-444444444444", "claude-code", hostile, "ana", "Tidy the docs"},
	}
	for i, tk := range tasks {
		recordOrigin(t, db, uuid.MustParse(tk.id), tk.agent, tk.machine, tk.user, tk.prompt, at.Add(time.Duration(i)*time.Hour))
	}
	h := Handler(&storeSource{db: db})
	for _, tt := range []struct {
		query string
		want  []int // indexes into tasks, newest first
	}{
		{"", []int{3, 2, 1, 0}},
		{"?agent=codex", []int{1, 0}},
		{"?agent=codex&machine=build-1", []int{0}},
		{"?machine=build-1", []int{2, 0}},
		{"?user=bo", []int{2, 1}},
		{"?project=claude-code&user=ana", []int{3}},
		{"?q=BANNER", []int{0}},
		{"?q=health&agent=codex", nil},
		{"?machine=" + url.QueryEscape(hostile), []int{3}},
		{"?machine=nowhere", nil},
	} {
		code, page := get(t, h, "/"+tt.query)
		if code != http.StatusOK {
			t.Fatalf("GET /%s: %d\n%s", tt.query, code, page)
		}
		var got []int
		for _, m := range regexp.MustCompile(`<tr data-task="([0-9a-f-]+)">`).FindAllStringSubmatch(page, -1) {
			for i, tk := range tasks {
				if tk.id == m[1] {
					got = append(got, i)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("GET /%s: tasks %v, want %v", tt.query, got, tt.want)
		}
		if tt.want == nil && !strings.Contains(page, "No task matches this filter") {
			t.Errorf("GET /%s: no task kept, and the page does not say so", tt.query)
		}
		for _, bad := range []string{"<script>alert", "<img src=x", "\u202e"} {
			if strings.Contains(page, bad) {
				t.Errorf("GET /%s: the page holds %q as is", tt.query, bad)
			}
		}
	}
	_, page := get(t, h, "/?machine=build-1")
	for _, want := range []string{`<option value="build-1" selected>build-1 (2)</option>`, `href="/?agent=codex"`, `href="/?user=bo"`, `2 of 4 tasks`,
		`<th scope="col">machine</th><th scope="col">user</th>`} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /?machine=build-1 lacks %s", want)
		}
	}
	// A hostile filter value is shown back as text, in the search box and as the missing choice.
	_, page = get(t, h, "/?q="+url.QueryEscape(hostile)+"&user="+url.QueryEscape(hostile))
	for _, bad := range []string{"<script>alert", "<img src=x", "\u202e"} {
		if strings.Contains(page, bad) {
			t.Errorf("a hostile filter: the page holds %q as is", bad)
		}
	}
}

// patientHandler is Handler with all the time a list page could want for the audits it reads
// itself: on a busy machine the default budget may pass before the first, leaving it pending.
func patientHandler(src Source) http.Handler {
	hd, h := newHandler(src, Options{})
	hd.auditBudget = time.Hour
	return h
}

// TestListFindings: the list counts each task's audit findings (a rule the agent, which reports
// its loads, never loaded), and the column shows only when a task has one.
func TestListFindings(t *testing.T) {
	db := openDB(t)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	recordOrigin(t, db, uuid.MustParse("a1111111-1111-4111-8111-111111111111"), "my-agent", "m", "u", "no loads reported", at)
	_, page := get(t, patientHandler(&storeSource{db: db}), "/")
	if strings.Contains(page, "audit findings") {
		t.Errorf("the list shows an audit column while no task has a finding")
	}
	recordOrigin(t, db, uuid.MustParse("a2222222-2222-4222-8222-222222222222"), "claude-code", "m", "u", "loads reported", at.Add(time.Hour))
	tasks, err := Tasks(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if tasks[0].Findings != 1 || tasks[0].missed["agents:/work/claude-code/AGENTS.md"] != 1 || tasks[1].Findings != 0 {
		for _, tk := range tasks {
			t.Logf("%s: %d findings, missed %v", tk.Agent, tk.Findings, tk.missed)
		}
		t.Errorf("want one missed_by_agent finding for the claude-code task, none for the other")
	}
	_, page = get(t, patientHandler(&storeSource{db: db}), "/")
	if !strings.Contains(page, `<th scope="col">audit findings</th>`) || !strings.Contains(page, `data-label="audit findings"><a href="/task/a2222222-2222-4222-8222-222222222222#audit-section">1</a>`) {
		t.Errorf("the list does not show the claude-code task's finding")
	}
}

// TestTaskParts: the task page holds the grid and the audit table shown; each request's
// evidence, context and audit table come from /task/ID/part at the page's length of the log,
// which answers 409 once the log has grown past it. The page is kept by that length: a second
// load is the same bytes.
func TestTaskParts(t *testing.T) {
	db := openDB(t)
	task := uuid.MustParse("0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c")
	s := recordTask(t, db, task, hostile, 2, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	h := Handler(&storeSource{db: db})
	path := "/task/" + task.String()
	_, page := get(t, h, path)
	at := regexp.MustCompile(`data-parts="/task/[0-9a-f-]+/part\?at=(\d+)"`).FindStringSubmatch(page)
	if at == nil {
		t.Fatalf("the task page names no parts address")
	}
	if strings.Contains(page, `<template id="d-`) || strings.Count(page, `<div class="audit-box`) != 1 {
		t.Errorf("the task page holds the cells' evidence or more than one audit table")
	}
	if _, again := get(t, h, path); again != page {
		t.Errorf("a second load of an unchanged task differs")
	}
	for req := range 2 {
		code, part := get(t, h, fmt.Sprintf("%s/part?at=%s&t=%d", path, at[1], req))
		if code != http.StatusOK {
			t.Fatalf("part %d: %d %s", req, code, part)
		}
		for _, want := range []string{fmt.Sprintf(`<template id="d-0-%d">`, req), fmt.Sprintf(`<template id="d-1-%d">`, req),
			fmt.Sprintf(`<template id="c-%d">`, req), fmt.Sprintf(`data-a="%d"`, req)} {
			if !strings.Contains(part, want) {
				t.Errorf("part %d lacks %s:\n%s", req, want, part)
			}
		}
		for _, bad := range []string{"<script", "<img src=x", "\u202e"} {
			if strings.Contains(part, bad) {
				t.Errorf("part %d holds %q as is", req, bad)
			}
		}
	}
	if code, _ := get(t, h, fmt.Sprintf("%s/part?at=%s&t=2", path, at[1])); code != http.StatusNotFound {
		t.Errorf("a request the page does not have: %d, want 404", code)
	}
	if code, _ := get(t, h, path+"/part?t=0"); code != http.StatusBadRequest {
		t.Errorf("a part without at: %d, want 400", code)
	}
	// The page the browser shows is still served its parts while the cache has it; once a
	// newer page is built in its place, they are answered 409 (the page is about to reload).
	turn(t, s, 2)
	if code, _ := get(t, h, fmt.Sprintf("%s/part?at=%s&t=0", path, at[1])); code != http.StatusOK {
		t.Errorf("a part of the page kept, the log grown: %d, want 200", code)
	}
	if _, now := get(t, h, path); now == page || strings.Count(now, `<th scope="col" class="req`) != 3 {
		t.Errorf("after a turn the task page is not built again")
	}
	if code, _ := get(t, h, fmt.Sprintf("%s/part?at=%s&t=0", path, at[1])); code != http.StatusConflict {
		t.Errorf("a part of a page the log has grown past: %d, want 409", code)
	}
}

// TestAuditLater: audits the list has no time for show pending and are read in the background;
// the next list shows them.
func TestAuditLater(t *testing.T) {
	db := openDB(t)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	recordOrigin(t, db, uuid.MustParse("a2222222-2222-4222-8222-222222222222"), "claude-code", "m", "u", "loads reported", at)
	c := NewCache()
	tasks, err := c.tasks(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	pending := c.audits(context.Background(), db, tasks, func() bool { return false })
	if len(pending) != 1 || !tasks[0].AuditPending {
		t.Fatalf("with no time left: %d pending, want 1", len(pending))
	}
	var b strings.Builder
	if err := RenderList(&b, NewList(tasks, Filter{})); err != nil || !strings.Contains(b.String(), "counting the audit's findings of 1 task") {
		t.Errorf("the list does not say an audit is pending (%v)", err)
	}
	c.auditLater(&storeSource{db: db}, pending)
	for deadline := time.Now().Add(time.Minute); ; {
		c.audits(context.Background(), db, tasks, func() bool { return false })
		if !tasks[0].AuditPending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the audit was not read in the background within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if tasks[0].Findings != 1 {
		t.Errorf("read in the background: %d findings, want 1", tasks[0].Findings)
	}
}

// TestEventsReconnect is a browser's reconnects at the protocol level: a client reads the
// stream, drops it, the log grows while it is away, and it comes back with the last id it saw
// (Last-Event-ID). It gets exactly one event, naming the newest sequence, and then only what
// is new; coming back when nothing happened, it gets nothing until the log grows.
func TestEventsReconnect(t *testing.T) {
	task, s, src, srv, head := eventsServer(t)
	grow := func() { turn(t, s, int(head())); src.Bump() }
	// stream is one connection: each block it read, comments and retry included.
	type stream struct {
		r    *bufio.Reader
		stop func()
	}
	open := func(lastID string) stream {
		// An event that never comes fails the test after a minute (it comes at once).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/task/"+task.String()+"/events", nil)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return stream{bufio.NewReader(resp.Body), func() { cancel(); resp.Body.Close() }}
	}
	// block reads the next block of lines (up to a blank line).
	block := func(st stream) []string {
		var lines []string
		for {
			line, err := st.r.ReadString('\n')
			if err != nil {
				t.Fatalf("the stream ended: %v (after %q)", err, lines)
			}
			if line = strings.TrimSuffix(line, "\n"); line == "" {
				if len(lines) > 0 {
					return lines
				}
				continue
			}
			lines = append(lines, line)
		}
	}
	// event reads blocks up to the next event, failing on any but the wanted id; it returns
	// the comments before it.
	event := func(st stream, want uint64) []string {
		var comments []string
		for {
			b := block(st)
			if strings.HasPrefix(b[0], ":") || strings.HasPrefix(b[0], "retry:") {
				comments = append(comments, b...)
				continue
			}
			if got := strings.Join(b, "|"); got != fmt.Sprintf("id: %d|data: %d", want, want) {
				t.Fatalf("event %q, want id %d only", got, want)
			}
			return comments
		}
	}
	// upTo reads events until the one naming want, each id above the one before and above
	// after (nothing shown twice), none past want; it returns the comments before the first.
	// A stream woken while a turn is still being appended may name the sequence it read then
	// before the turn's last one.
	upTo := func(st stream, after, want uint64) []string {
		var comments []string
		for last := after; last != want; {
			b := block(st)
			if strings.HasPrefix(b[0], ":") || strings.HasPrefix(b[0], "retry:") {
				if last == after {
					comments = append(comments, b...)
				}
				continue
			}
			var id, data uint64
			if n, _ := fmt.Sscanf(strings.Join(b, "|"), "id: %d|data: %d", &id, &data); n != 2 || id != data || id <= last || id > want {
				t.Fatalf("event %q after id %d, want ids that grow up to %d", b, last, want)
			}
			last = id
		}
		return comments
	}
	st := open("")
	if b := block(st); b[0] != fmt.Sprintf("retry: %d", reconnect.Milliseconds()) {
		t.Errorf("the stream opens with %q, want the reconnect delay", b)
	}
	if b := block(st); len(b) != 3 || b[1] != fmt.Sprintf("id: %d", head()) {
		t.Fatalf("a fresh stream starts with %q, want a head event", b)
	}
	grow()
	seen := head()
	// The bump may wake the stream mid-append; ids only grow: read up to the head.
	for {
		b := block(st)
		if b[0] == fmt.Sprintf("id: %d", seen) {
			break
		}
		if !strings.HasPrefix(b[0], "id: ") {
			t.Fatalf("unexpected %q", b)
		}
	}
	st.stop()

	// Away while the log grows three times: back with the id it saw, one event, the newest.
	grow()
	grow()
	grow()
	st = open(fmt.Sprint(seen))
	event(st, head())
	// Then only what is new: the next growth, not the same id again.
	before := head()
	grow()
	upTo(st, before, head())
	st.stop()

	// Back when nothing happened: the stream says it is up to date, and sends nothing until the
	// log grows.
	before = head()
	st = open(fmt.Sprint(before))
	src.Bump() // a change elsewhere: nothing to send
	grow()
	if comments := upTo(st, before, head()); !slices.Contains(comments, ": up to date") {
		t.Errorf("a stream back at the head said %q before the next event, want it up to date", comments)
	}
	st.stop()
}

// TestRulesMissed: the rules pages count the requests at which the agent missed a rule that
// applied (the audit's missed_by_agent), in all and task by task.
func TestRulesMissed(t *testing.T) {
	db := openDB(t)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	recordOrigin(t, db, uuid.MustParse("a1111111-1111-4111-8111-111111111111"), "claude-code", "m", "u", "one", at)
	recordOrigin(t, db, uuid.MustParse("a2222222-2222-4222-8222-222222222222"), "claude-code", "m", "u", "two", at.Add(time.Hour))
	rules, err := Rules(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Missed != 2 || len(rules[0].Uses) != 2 || rules[0].Uses[0].Missed != 1 || rules[0].Uses[1].Missed != 1 {
		t.Fatalf("rules %+v, want AGENTS.md missed once in each task", rules)
	}
	h := Handler(&storeSource{db: db})
	_, page := get(t, h, "/rules")
	if !strings.Contains(page, `data-label="missed by the agent">2<`) {
		t.Errorf("/rules does not count the misses:\n%s", page)
	}
	_, page = get(t, h, "/rule?id="+url.QueryEscape(rules[0].ID))
	if !strings.Contains(page, "missed by the agent at 2") || strings.Count(page, `data-label="missed by the agent">1<`) != 2 {
		t.Errorf("/rule does not count the misses:\n%s", page)
	}
}

// TestPublicToken: a public web app answers only requests with its token, whatever their Host:
// ?token= logs a browser in with an HttpOnly, SameSite=Strict cookie and sends it to the same
// address without the token; the cookie or a bearer header then opens every page and the event
// stream; a wrong or missing token is answered 401.
func TestPublicToken(t *testing.T) {
	db := openDB(t)
	task := uuid.MustParse("0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c")
	recordTask(t, db, task, "go", 1, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	const token = "5e3c1f0b9a8d7c6e5f4a3b2c1d0e9f8a"
	h := NewHandler(&storeSource{db: db}, Options{Token: token})
	do := func(path string, set func(*http.Request)) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "tasks.example:8080"
		if set != nil {
			set(req)
		}
		h.ServeHTTP(rec, req)
		return rec
	}
	events := "/task/" + task.String() + "/events?since=999999"
	for _, path := range []string{"/", "/task/" + task.String(), events, "/rules", "/?token=wrong", "/?token="} {
		if rec := do(path, nil); rec.Code != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, rec.Code)
		}
	}
	if rec := do("/", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: TokenCookie, Value: token + "x"}) }); rec.Code != http.StatusUnauthorized {
		t.Errorf("a wrong cookie: %d, want 401", rec.Code)
	}
	rec := do("/?agent=codex&token="+token, nil)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/?agent=codex" {
		t.Fatalf("?token=: %d to %q, want 303 to /?agent=codex", rec.Code, rec.Header().Get("Location"))
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != TokenCookie || cookies[0].Value != token || !cookies[0].HttpOnly ||
		cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/" {
		t.Fatalf("?token= set %+v, want one HttpOnly, SameSite=Strict cookie for /", cookies)
	}
	withCookie := func(r *http.Request) { r.AddCookie(cookies[0]) }
	for _, path := range []string{"/?agent=codex", "/task/" + task.String(), "/rules"} {
		if rec := do(path, withCookie); rec.Code != http.StatusOK {
			t.Errorf("GET %s with the cookie: %d, want 200", path, rec.Code)
		}
	}
	if rec := do("/", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }); rec.Code != http.StatusOK {
		t.Errorf("GET / with the bearer token: %d, want 200", rec.Code)
	}
	// The event stream with the cookie: it answers (its first lines are there at once).
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+events, nil)
	req.AddCookie(cookies[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("the event stream with the cookie: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	// Without a token, the Host check stands.
	if code, _ := get(t, Handler(&storeSource{db: db}), "/"); code != http.StatusOK {
		t.Errorf("loopback app, loopback Host: %d", code)
	}
}

// TestTimelineLeftOut: a page that leaves the first events of its timeline out says how many,
// and the timeline part has them all.
func TestTimelineLeftOut(t *testing.T) {
	db := openDB(t)
	task := uuid.MustParse("0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c")
	recordTask(t, db, task, "go", 3, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	page, err := report.Build(context.Background(), db, task)
	if err != nil {
		t.Fatal(err)
	}
	page.Parts, page.TimelineFrom = "/task/"+task.String()+"/part?at=1", 5
	var b, all strings.Builder
	if err := report.Render(&b, page); err != nil {
		t.Fatal(err)
	}
	if err := report.RenderTimeline(&all, page); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`<tr[^>]*><td>\d+ · \d+</td><td>(\d+)</td>`)
	seqs := func(s string) (out []string) {
		for _, m := range row.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	if got := seqs(b.String()); len(got) != page.Events-4 || got[0] != "5" || !strings.Contains(b.String(), "The first 4 events are left out") {
		t.Errorf("the page's timeline shows the events %v, want 5 to %d and a note on the first 4", got, page.Events)
	}
	if got := seqs(all.String()); len(got) != page.Events || got[0] != "1" {
		t.Errorf("the timeline part holds the events %v, want all %d", got, page.Events)
	}
}

// blobless is a store whose rule file contents cannot be read: a task's audit, which loads its
// last rules snapshot, fails on it, and its decisions and deliveries still read.
type blobless struct{ store.Store }

func (blobless) Blob(string) ([]byte, error) { return nil, store.ErrBlobNotFound }

// TestRulesCountedFromTheAudit: the rules page counts a task's rules from its audit's rows: in
// the prompt, delivered, shadowed, toggled off and excluded. A task whose audit fails (its rule
// files missing from the store) is counted from the rows alone, with the same counts.
func TestRulesCountedFromTheAudit(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	task := uuid.MustParse("0c4d8e3b-2e5f-4a6b-8c7d-8e9f0a1b2c3d")
	ws := fstest.MapFS{
		".clinerules/general.md":  {Data: []byte("Run the tests.\n")},
		".clinerules/style.md":    {Data: []byte("Tabs, not spaces.\n")},
		".clinerules/api.md":      {Data: []byte("---\npaths: [\"src/api/**\"]\n---\nValidate input.\n")},
		".clinerules/web.md":      {Data: []byte("---\npaths: [\"src/web/**\"]\n---\nUse the design tokens.\n")},
		".windsurf/rules/docs.md": {Data: []byte("---\ntrigger: glob\nglobs: docs/**\n---\nPresent tense.\n")},
		".clinerules/docs.md":     {Data: []byte("---\npaths: [\"docs/**\"]\n---\nShort sentences.\n")},
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s, err := session.OpenAgent(ctx, db, task, session.AgentOptions{Agent: agentlog.Codex,
		Started: &events.TaskStarted{Roots: []string{"/work/shop"}, Runtime: events.Runtime{Name: "codex"}},
		RootFS:  func(string) fs.FS { return ws },
		Now:     func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.UserMessage(ctx, "Tidy up the shop."); err != nil {
		t.Fatal(err)
	}
	folders := []string{"src/api", "src/web", "docs", "lib"}
	for i := range 16 {
		if i == 8 {
			if _, err := s.UserMessage(ctx, "Now the docs."); err != nil {
				t.Fatal(err)
			}
		}
		params, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("%s/f%d.ts", folders[i%len(folders)], i)})
		if _, err := s.ToolCall(ctx, "read_file", fmt.Sprintf("call_%d", i), params); err != nil {
			t.Fatal(err)
		}
		var d *session.Decision
		if i%3 == 0 {
			d, _, err = s.DecideAndDeliver(ctx, "PreToolUse", events.ChannelTool, fmt.Sprintf("call_%d", i))
		} else {
			d, err = s.Decide(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		if i == 5 {
			for _, r := range d.Rules.Results {
				if r.Rule.Name == "style" {
					if _, err := s.Toggle(ctx, r.Rule.ID, false); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	fromAudit, fromLog := countedBothWays(t, db, task)
	if !reflect.DeepEqual(fromAudit, fromLog) {
		t.Fatalf("counted from the audit:\n%+v\nfrom the log:\n%+v", fromAudit, fromLog)
	}
	// What the scenario holds, whichever way it is counted: every rule decided at each of the 16
	// requests; general always in the prompt; style in it until it was toggled off after the
	// sixth; Cline's docs shadowed by Windsurf's; each rule delivered once, by the first hook
	// after it applied; api, web and Windsurf's docs excluded at some requests.
	byID := map[string]Counts{}
	for id, u := range fromLog.uses {
		byID[id] = u.Counts
	}
	for id, want := range map[string]Counts{
		"cline:/work/shop/.clinerules/general.md":     {Requests: 16, Applied: 16, Delivered: 1},
		"cline:/work/shop/.clinerules/style.md":       {Requests: 16, Applied: 6, Delivered: 1, Off: 10},
		"cline:/work/shop/.clinerules/docs.md":        {Requests: 16, Shadowed: 16},
		"cline:/work/shop/.clinerules/api.md":         {Requests: 16, Applied: 12, Delivered: 1, Excluded: 4},
		"cline:/work/shop/.clinerules/web.md":         {Requests: 16, Applied: 12, Delivered: 1, Excluded: 4},
		"windsurf:/work/shop/.windsurf/rules/docs.md": {Requests: 16, Applied: 11, Delivered: 1, Excluded: 5},
	} {
		if got := byID[id]; got != want {
			t.Errorf("%s: %+v, want %+v", id, got, want)
		}
	}

	counts := func(rules []Rule) string {
		var b strings.Builder
		for _, r := range rules {
			fmt.Fprintf(&b, "%s %s %s %+v\n", r.ID, r.Name, r.Path, r.Counts)
			for _, u := range r.Uses {
				fmt.Fprintf(&b, "  %s %+v %v %v\n", u.Task.ID, u.Counts, u.First, u.Last)
			}
		}
		return b.String()
	}
	// The page reads the log twice when the audit is read (the task's line, its audit), and the
	// audit's rows alone again only when the audit fails.
	reads := &countingReads{Store: db}
	audited, err := Rules(ctx, reads, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := reads.n.Load(); n != 2 {
		t.Errorf("the rules page read the log %d times, want 2: the task's line and its audit", n)
	}
	reads = &countingReads{Store: blobless{db}}
	failed, err := Rules(ctx, reads, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := reads.n.Load(); n != 3 {
		t.Errorf("with the audit failing the rules page read the log %d times, want 3: the task's line, its audit, its rows alone", n)
	}
	if len(audited) != 6 || counts(audited) != counts(failed) {
		t.Fatalf("the rules page, audited:\n%s\nwith the audit failed:\n%s", counts(audited), counts(failed))
	}
}

// countedBothWays counts a task's rules from its whole audit and from the audit's rows alone
// (session.AuditRequests, what counts a task whose audit fails), and holds the rows to be the
// same.
func countedBothWays(t *testing.T, db store.Store, task uuid.UUID) (fromAudit, fromLog taskRuleUses) {
	t.Helper()
	ctx := context.Background()
	rep, err := session.Audit(ctx, db, task, session.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := session.AuditRequests(ctx, db, task)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows, rep.Requests) {
		t.Fatalf("the rows alone:\n%+v\nthe audit's:\n%+v", rows, rep.Requests)
	}
	return countRules(rep.Requests), countRules(rows)
}

// countingReads is a store that counts the reads of a log.
type countingReads struct {
	store.Store
	n atomic.Int32
}

func (c *countingReads) Events(ctx context.Context, task uuid.UUID, from uint64) iter.Seq2[events.Event, error] {
	c.n.Add(1)
	return c.Store.Events(ctx, task, from)
}

// TestRulesCountOneIDTwice: a log (not tasklog's engine, which names every rule apart) whose
// decision names one rule id twice, in the prompt from one file and shadowed from another,
// counts each outcome as recorded, the same from the audit as from its rows alone: once in the prompt,
// once shadowed, and delivered for the outcome in the prompt; the rule is shown by the outcome
// of the first path.
func TestRulesCountOneIDTwice(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	task := uuid.MustParse("0d5e9f4c-3f6a-4b7c-8d8e-9fa0b1c2d3e4")
	ids, at := events.NewIDSource(rand.New(rand.NewSource(9))), time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var evs []events.Event
	for _, p := range []events.Payload{
		&events.TaskStarted{Roots: []string{"/work/shop"}, Runtime: events.Runtime{Name: "my-agent"}},
		&events.UserMessage{Text: "Tidy up."},
		&events.Decision{Turn: 1, Engine: "rules/1", Context: []events.ContextPath{},
			Included: []events.RuleOutcome{{ID: "x", Name: "from z", Path: "z/x.md", Category: "always", Reason: "always"}},
			Excluded: []events.RuleOutcome{{ID: "x", Name: "from a", Path: "a/x.md", Category: "always", Reason: "shadowed", ShadowedBy: "x"}}},
		&events.Delivery{Decision: 3, Agent: "my-agent", Hook: "PreToolUse", Channel: events.ChannelTool, Form: events.FormFull,
			Rules: []events.DeliveredRule{{ID: "x", Name: "from z"}}, Bytes: 1, SHA256: strings.Repeat("0", 64)},
	} {
		ev, err := events.New(p)
		if err != nil {
			t.Fatal(err)
		}
		if ev.ID, err = ids.New(at); err != nil {
			t.Fatal(err)
		}
		ev.Time = at
		if len(evs) > 0 {
			ev.Turn = 1
		}
		evs = append(evs, ev)
	}
	if _, err := db.Append(ctx, task, 0, evs...); err != nil {
		t.Fatal(err)
	}
	fromAudit, fromLog := countedBothWays(t, db, task)
	want := Counts{Requests: 2, Applied: 1, Delivered: 1, Shadowed: 1}
	for _, c := range []struct {
		way  string
		uses taskRuleUses
	}{{"audit", fromAudit}, {"rows alone", fromLog}} {
		if u := c.uses.uses["x"]; u == nil || u.Counts != want || c.uses.meta["x"].Path != "a/x.md" {
			t.Errorf("from the %s: %+v shown as %+v, want %+v shown as a/x.md", c.way, u, c.uses.meta["x"], want)
		}
	}
}
