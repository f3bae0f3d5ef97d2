package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/session/serve"
)

// hostilePrompt holds markup and a right-to-left override: the pages must show both as text.
const hostilePrompt = "\u202egnp.exe <script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">"

// TestServeWebLive opens a task's page served by 'replay serve --http' in headless Chromium,
// sends a hook through the same server, and waits until the new request shows on the open page
// without a reload, the last request marked "now". The task's first prompt holds markup and a
// bidirectional control: the list and the task page show them as text.
//
// It needs Debian's chromium package on PATH and skips without it.
func TestServeWebLive(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not on PATH: install Debian's chromium package to check the live web app")
	}
	bin := testenv.ReplayBinary(t)
	ws, home := hookWorkspace(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	env := []string{"HOME=" + home, "TASKLOG_SERVE=on"}
	base := startWebServer(t, bin, db, env)

	hook := func(v map[string]any) {
		t.Helper()
		v["session_id"], v["cwd"] = "s-live", ws
		payload, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if r := hookProcess(bin, "claude-code", db, payload, env); r.code != 0 {
			t.Fatalf("%s: %+v", v["hook_event_name"], r)
		}
	}
	t.Logf("web app on %s", base)
	hook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": hostilePrompt})
	task := regexp.MustCompile(`/task/([0-9a-f-]{36})"`).FindStringSubmatch(get(t, base))
	if task == nil {
		t.Fatalf("the list of tasks links no task:\n%s", get(t, base))
	}
	requests := func() int { return strings.Count(get(t, base+"task/"+task[1]), `<th scope="col" class="req`) }
	before := requests()
	t.Logf("task %s: %d requests", task[1], before)

	// The browser loads the pages through a proxy that also serves the harness: one origin, so
	// the harness reads the pages' DOM. It reports when the task page is live, then when the
	// page shows a new request.
	ready, result := make(chan pageReport, 1), make(chan pageReport, 1)
	target, _ := url.Parse(base)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // an event stream goes through as it is written
	streams := &streamCutter{}
	mux := http.NewServeMux()
	mux.Handle("/", proxy)
	mux.Handle("GET /task/{id}/events", streams.wrap(proxy))
	mux.HandleFunc("GET /harness", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, liveHarness, task[1])
	})
	report := func(ch chan pageReport) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var rep pageReport
			if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
				t.Errorf("harness report: %v", err)
			}
			select {
			case ch <- rep:
			default:
			}
		}
	}
	reconnected := make(chan pageReport, 1)
	mux.HandleFunc("POST /ready", report(ready))
	mux.HandleFunc("POST /result", report(result))
	mux.HandleFunc("POST /reconnected", report(reconnected))
	mux.HandleFunc("POST /log", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		t.Logf("harness: %s", b)
	})
	srv := httptest.NewServer(mux)
	// Cleanups run last first: the browser is gone, and its event stream with it, before the
	// proxy closes.
	t.Cleanup(srv.Close)
	console := startBrowser(t, chromium, srv.URL+"/harness")
	defer func() {
		if t.Failed() {
			t.Logf("the browser's console:\n%s", console())
		}
	}()

	// A machine ten times slower than usual still loads the pages well within this.
	const budget = 2 * time.Minute
	var first pageReport
	select {
	case first = <-ready:
	case <-time.After(budget):
		t.Fatalf("the task page did not load and go live within %s", budget)
	}
	if first.Requests != before {
		t.Errorf("the page shows %d requests, the server's page %d", first.Requests, before)
	}
	t.Logf("the task page's grid was shown %.0f ms after it was asked for", first.Shown)
	checkHostile(t, "task page", first.Task)
	checkHostile(t, "list", first.List)

	// A tool call into src/api brings its scoped rule in: a new request.
	hook(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": "toolu_live_1",
		"tool_input": map[string]any{"file_path": filepath.Join(ws, "src/api/routes.ts")}})
	replied := time.Now()
	want := requests()
	if want <= before {
		t.Fatalf("the hook made no new request (%d before, %d after): nothing for the page to show", before, want)
	}
	var got pageReport
	select {
	case got = <-result:
	case <-time.After(budget):
		t.Fatalf("the open page did not show the new request within %s of the hook", budget)
	}
	if got.Requests != want {
		t.Errorf("the page shows %d requests after the hook, the server's page %d", got.Requests, want)
	}
	t.Logf("the open page showed the new request %d ms after the hook's reply", got.At-replied.UnixMilli())
	if got.Loads != 1 {
		t.Errorf("the page was loaded %d times: it should update without a reload", got.Loads)
	}
	if !got.NowLast {
		t.Errorf("the last request is not marked now; the live banner says %q", got.Live)
	}
	if got.Updates < 1 {
		t.Errorf("the live script counts %d updates", got.Updates)
	}
	checkHostile(t, "task page after the update", got.Task)

	// The server side ends the page's event stream; the browser reconnects by itself. Its
	// reconnect is held while two hooks append, then let through: the page shows both new
	// requests, once each, after one event naming the newest sequence.
	lastID := streams.last()
	streams.cut()
	select {
	case <-streams.waiting:
	case <-time.After(budget):
		t.Fatalf("the page did not reconnect its event stream within %s of its end", budget)
	}
	for i, f := range []string{"src/api/handlers.ts", "src/api/auth.ts"} {
		hook(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": fmt.Sprintf("toolu_live_%d", i+2),
			"tool_input": map[string]any{"file_path": filepath.Join(ws, f)}})
	}
	head := requests()
	streams.release()
	var back pageReport
	select {
	case back = <-reconnected:
	case <-time.After(budget):
		t.Fatalf("the page did not show the requests made while it was away within %s of its reconnect", budget)
	}
	if back.Requests != head || back.Loads != 1 || back.Updates != got.Updates+1 {
		t.Errorf("after the reconnect the page shows %d requests (the server's page %d), loaded %d times, %d updates (%d before): want every request once, one update, no reload",
			back.Requests, head, back.Loads, back.Updates, got.Updates)
	}
	if ids, sent := streams.reconnect(); ids != fmt.Sprint(lastID) || len(sent) != 1 || sent[0] <= lastID {
		t.Errorf("the reconnect sent Last-Event-ID %q (the last id seen was %d) and got the events %v: want one, past it", ids, lastID, sent)
	}

	// A second server for the same database has no web app to offer: it says so and fails.
	out, err := exec.Command(bin, "serve", "--db", db, "--http", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--http needs the server itself: stop that one ('replay serve --stop --db "+db+"')") {
		t.Errorf("a second 'replay serve --http' on the database: %v\n%s", err, out)
	}
	if first.Selected == "" || got.Selected != first.Selected {
		t.Errorf("the cell selected before the update was %q, after it %q: an update keeps the reader's selection", first.Selected, got.Selected)
	}
	if first.Filter == "" || got.Filter != first.Filter || !got.FilterFocused {
		t.Errorf("the rule filter held %q before the update, %q after it (focused: %v): an update keeps it", first.Filter, got.Filter, got.FilterFocused)
	}
}

// streamCutter stands between the browser and the server's event streams: it ends them as the
// server would (cut), holds the browser's reconnects until release, and notes the ids each
// stream carried and the Last-Event-ID each request sent.
type streamCutter struct {
	mu       sync.Mutex
	cancels  []context.CancelFunc
	holding  chan struct{} // closed: let through
	waiting  chan struct{} // a reconnect is held
	requests []streamRequest
}

type streamRequest struct {
	lastID string
	ids    []uint64
}

func (s *streamCutter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		hold, waiting := s.holding, s.waiting
		s.mu.Unlock()
		if hold != nil {
			select {
			case waiting <- struct{}{}:
			default:
			}
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		ctx, cancel := context.WithCancel(r.Context())
		s.mu.Lock()
		s.cancels = append(s.cancels, cancel)
		s.requests = append(s.requests, streamRequest{lastID: r.Header.Get("Last-Event-ID")})
		n := len(s.requests) - 1
		s.mu.Unlock()
		next.ServeHTTP(&idWriter{ResponseWriter: w, note: func(id uint64) {
			s.mu.Lock()
			s.requests[n].ids = append(s.requests[n].ids, id)
			s.mu.Unlock()
		}}, r.WithContext(ctx))
	})
}

// cut ends every stream open and holds the next ones.
func (s *streamCutter) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holding, s.waiting = make(chan struct{}), make(chan struct{}, 1)
	for _, c := range s.cancels {
		c()
	}
	s.cancels = nil
}

// release lets the held reconnects through.
func (s *streamCutter) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.holding)
	s.holding = nil
}

// last is the last id any stream carried.
func (s *streamCutter) last() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last uint64
	for _, r := range s.requests {
		for _, id := range r.ids {
			last = max(last, id)
		}
	}
	return last
}

// reconnect is the Last-Event-ID the last stream was asked with, and the ids it carried.
func (s *streamCutter) reconnect() (string, []uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests[len(s.requests)-1]
	return r.lastID, append([]uint64(nil), r.ids...)
}

// idWriter notes the id of each event written through it.
type idWriter struct {
	http.ResponseWriter
	note func(uint64)
	rest []byte
}

func (w *idWriter) Write(p []byte) (int, error) {
	w.rest = append(w.rest, p...)
	for {
		i := bytes.IndexByte(w.rest, '\n')
		if i < 0 {
			break
		}
		var id uint64
		if _, err := fmt.Sscanf(string(w.rest[:i]), "id: %d", &id); err == nil {
			w.note(id)
		}
		w.rest = w.rest[i+1:]
	}
	return w.ResponseWriter.Write(p)
}

func (w *idWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// pageReport is what the harness saw of the pages.
type pageReport struct {
	Requests, Loads, Updates int
	// At is when the harness saw it (ms since the epoch); Shown when the grid was shown, in
	// ms from the page's navigation.
	At                     int64
	Shown                  float64
	NowLast, FilterFocused bool
	Live, Selected, Filter string
	Task, List             hostileView
}

// hostileView is what a page made of the hostile prompt: its text where it shows the title,
// whether a script of it ran or an element of it was made.
type hostileView struct {
	Text          string
	Pwned         bool
	Injected      int
	RawBidi       bool
	EscapedShown  bool
	MarkupAsText  bool
	ScriptsInPage int
}

func checkHostile(t *testing.T, page string, v hostileView) {
	t.Helper()
	if v.Pwned || v.Injected > 0 {
		t.Errorf("%s: the prompt's markup ran or became elements (pwned %v, %d injected img elements)", page, v.Pwned, v.Injected)
	}
	if !v.MarkupAsText {
		t.Errorf("%s: the prompt's markup is not shown as text: %q", page, v.Text)
	}
	if v.RawBidi || !v.EscapedShown {
		t.Errorf("%s: the right-to-left override is not shown as \\u202e (raw: %v): %q", page, v.RawBidi, v.Text)
	}
}

// liveHarness frames the list and the task page (%s: the task) and reports to the test.
const liveHarness = `<!doctype html><html><body style="margin:0">
<iframe id="task" src="/task/%[1]s" width="1400" height="900" style="border:0;display:block"></iframe>
<iframe id="list" src="/" width="1400" height="600" style="border:0;display:block"></iframe>
<script>
window.onerror = function (m, src, line) { fetch('/log', {method: 'POST', body: m + ' at ' + src + ':' + line}); };
var loads = 0, listLoaded = false, started = false, taskFrame = document.getElementById('task'), listFrame = document.getElementById('list');
function post(path, v) { return fetch(path, {method: 'POST', body: JSON.stringify(v)}); }
function requests(d) { return d.querySelectorAll('.grid thead th.req').length; }
function hostile(w, sel) {
  var el = w.document.querySelector(sel), text = el ? el.textContent : '';
  return {Text: text, Pwned: !!w.pwned, Injected: w.document.querySelectorAll('img[src="x"]').length,
    RawBidi: text.indexOf('\u202e') >= 0, EscapedShown: text.indexOf('\\u202e') >= 0,
    MarkupAsText: text.indexOf('<script>window.pwned=1<\/script>') >= 0};
}
// The task page's title of prompt 1 is in the grid's prompt header and the jump list.
function taskView() { return hostile(taskFrame.contentWindow, '#jump option:last-child'); }
function listView() { return hostile(listFrame.contentWindow, 'td.title a'); }
function selected(d) { var c = d.querySelector('.grid .cell[aria-selected="true"]'); return c ? c.closest('tr').dataset.name + ' @' + (c.cellIndex - 1) : ''; }
function live(d) { return d.body && d.body.getAttribute('data-live') === 'open'; }
// wait calls fn on every change of the frame's document until it returns true.
function wait(frame, fn) {
  var d = frame.contentDocument;
  if (fn()) return;
  var mo = new MutationObserver(function () { if (fn()) mo.disconnect(); });
  mo.observe(d.documentElement, {subtree: true, childList: true, attributes: true});
}
function start() {
  if (started || !listLoaded || loads !== 1) return;
  started = true;
  var d = taskFrame.contentDocument, before;
  wait(taskFrame, function () {
    if (!live(taskFrame.contentDocument)) return false;
    before = requests(taskFrame.contentDocument);
    // The reader selects the last rule's cell at the first request (the page starts on the
    // first rule in the prompt) and types its name in the filter: the update keeps both.
    var d = taskFrame.contentDocument, rows = d.querySelectorAll('.grid tbody tr'), f = d.getElementById('filter');
    var c = rows[rows.length - 1].querySelector('.cell');
    c.click();
    f.focus(); f.value = c.closest('tr').dataset.name.split(' ')[0]; f.dispatchEvent(new Event('input'));
    var nav = taskFrame.contentWindow.performance.getEntriesByType('navigation')[0];
    post('/ready', {Shown: nav ? nav.domContentLoadedEventEnd : 0, Requests: before, Loads: loads, Task: taskView(), List: listView(), Selected: selected(d), Filter: f.value});
    wait(taskFrame, function () {
      var d = taskFrame.contentDocument, ths = d.querySelectorAll('.grid thead th.req');
      if (ths.length <= before) return false;
      var now = ths.length;
      wait(taskFrame, function () {
        var d = taskFrame.contentDocument, n = requests(d);
        if (n <= now) return false;
        post('/reconnected', {Requests: n, Loads: loads, Updates: +d.body.getAttribute('data-updates'), At: Date.now()});
        return true;
      });
      post('/result', {At: Date.now(), Requests: ths.length, Loads: loads, Updates: +d.body.getAttribute('data-updates'),
        NowLast: ths[ths.length - 1].classList.contains('now'), Live: (d.getElementById('live') || {}).textContent || '', Task: taskView(),
        Selected: selected(d), Filter: d.getElementById('filter').value, FilterFocused: d.activeElement === d.getElementById('filter')});
      return true;
    });
    return true;
  });
}
taskFrame.addEventListener('load', function () { loads++; start(); });
listFrame.addEventListener('load', function () { listLoaded = true; start(); });
</script></body></html>`

// startWebServer starts 'replay serve --http 127.0.0.1:0' on db and returns the web app's
// address (http://127.0.0.1:PORT/) once the server answers on its socket too.
func startWebServer(t *testing.T, bin, db string, env []string) string {
	t.Helper()
	base, _ := startWebServerArgs(t, bin, db, env)
	return base
}

// startWebServerArgs is startWebServer with more arguments to 'replay serve'; it also returns
// what the server printed up to its address.
func startWebServerArgs(t *testing.T, bin, db string, env []string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--db", db, "--http", "127.0.0.1:0", "--log", filepath.Join(t.TempDir(), "serve.log")}, args...)...)
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command(bin, "serve", "--stop", "--db", db).Run()
		cmd.Process.Kill() // gone already after --stop; this one's own process only
		cmd.Wait()
	})
	addr := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var said strings.Builder
		for sc.Scan() {
			said.WriteString(sc.Text() + "\n")
			if u, ok := strings.CutPrefix(sc.Text(), "replay serve: the web app is on "); ok && strings.HasSuffix(u, "/") {
				addr <- [2]string{u, said.String()}
			}
		}
		io.Copy(io.Discard, out)
	}()
	var base, said string
	select {
	case a := <-addr:
		base, said = a[0], a[1]
	case <-time.After(testenv.ServerWait):
		t.Fatalf("replay serve --http did not say where its web app is within %s", testenv.ServerWait)
	}
	c, err := testenv.DialWhenUp(serve.SocketPath(db))
	if err != nil {
		t.Fatalf("the server does not answer on its socket: %v", err)
	}
	c.Close()
	return base, said
}

// startBrowser opens url in headless Chromium, which runs until the test ends; the function
// returned gives the console messages of its pages so far.
func startBrowser(t *testing.T, chromium, url string) func() string {
	t.Helper()
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-breakpad",
		"--enable-logging=stderr", "--v=0", "--user-data-dir="+t.TempDir(), "--window-size=1400,1600", url)
	var mu sync.Mutex
	var log bytes.Buffer
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return log.Write(p)
	})
	// Its own process group: the wrapper script and the browser's processes end together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		var b strings.Builder
		for _, line := range strings.Split(log.String(), "\n") {
			if strings.Contains(line, "CONSOLE") {
				b.WriteString(line + "\n")
			}
		}
		return b.String()
	}
}

// writerFunc is a function as an io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", u, resp.Status, b)
	}
	return string(b)
}
