package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"image"
	"image/draw"
	"image/png"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session/web/webtest"
	"github.com/tasklog/tasklog/store"
)

var screenshots = flag.String("screenshots", "", "TestServeWebScreenshots: write the web app's screenshots into this folder (docs/img)")

// TestServeWebScreenshots lays out the web app of 'replay serve --http' in headless Chromium:
// the list of tasks and a task's page, at 1400 and 390 px wide, from a fixture recorded by
// Claude Code hooks (three tasks on two machines, several prompts, scoped rules delivered, an
// audit finding). Each view must fit its width: nothing reaches past it. With -screenshots DIR
// it also writes the PNGs the docs show:
//
//	go test ./cmd/replay -run TestServeWebScreenshots -screenshots ../../docs/img
//
// It needs Debian's chromium package on PATH and skips without it.
func TestServeWebScreenshots(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not on PATH: install Debian's chromium package to lay out the web app")
	}
	bin := testenv.ReplayBinary(t)
	ws, home := hookWorkspace(t)
	writeFiles(t, ws, map[string]string{"src/ui/Health.tsx": "export function Health() {}\n"})
	db := filepath.Join(t.TempDir(), "tasklog.db")
	var task string
	for _, s := range []struct {
		id, machine, user string
		steps             []map[string]any
	}{
		{"s-changelog", "laptop-ana", "ana", []map[string]any{
			{"hook_event_name": "UserPromptSubmit", "prompt": "Write the changelog for 2.4."},
		}},
		{"s-banner", "build-7", "bo", []map[string]any{
			{"hook_event_name": "UserPromptSubmit", "prompt": "Fix the banner on the status page."},
			{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": "t1", "tool_input": map[string]any{"file_path": "src/ui/Health.tsx"}},
		}},
		{"s-health", "laptop-ana", "ana", []map[string]any{
			{"hook_event_name": "UserPromptSubmit", "prompt": "Add a /health endpoint to the API."},
			{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": "t1", "tool_input": map[string]any{"file_path": "src/api/routes.ts"}},
			{"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": "t2", "tool_input": map[string]any{"file_path": "src/api/routes.ts", "old_string": "[]", "new_string": "[health]"}},
			{"hook_event_name": "UserPromptSubmit", "prompt": "Now show it in the UI as a small badge."},
			{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_use_id": "t3", "tool_input": map[string]any{"file_path": "src/ui/Health.tsx"}},
			{"hook_event_name": "UserPromptSubmit", "prompt": "Run the tests and tidy up."},
			{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "t4", "tool_input": map[string]any{"command": "npm test"}},
		}},
	} {
		env := []string{"HOME=" + home, "TASKLOG_MACHINE=" + s.machine, "TASKLOG_USER=" + s.user}
		for _, v := range append([]map[string]any{{"hook_event_name": "SessionStart", "source": "startup"}}, s.steps...) {
			v["session_id"], v["cwd"] = s.id, ws
			if in, ok := v["tool_input"].(map[string]any); ok {
				if p, ok := in["file_path"].(string); ok {
					in["file_path"] = filepath.Join(ws, p)
				}
			}
			payload, _ := json.Marshal(v)
			if r := hookProcess(bin, "claude-code", db, payload, env); r.code != 0 {
				t.Fatalf("%s %s: %+v", s.id, v["hook_event_name"], r)
			}
		}
	}
	base, _ := startWebServerArgs(t, bin, db, []string{"HOME=" + home})
	// The first list may leave an audit to the background reader when the machine is busy (it
	// says "counting"): ask again until the audits are in.
	list := get(t, base)
	for deadline := time.Now().Add(testenv.ServerWait); strings.Contains(list, "counting the audit") && time.Now().Before(deadline); list = get(t, base) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, m := range regexp.MustCompile(`<a href="/task/([0-9a-f-]{36})">Add a /health`).FindAllStringSubmatch(list, -1) {
		task = m[1]
	}
	if task == "" || !strings.Contains(list, "audit findings") || !strings.Contains(list, "build-7") {
		t.Fatalf("the list lacks the fixture's health task, its machines or its audit findings:\n%s", list)
	}

	// The frame and the pages come from one origin (the pages refuse to be framed from another).
	target, _ := url.Parse(base)
	mux := http.NewServeMux()
	mux.Handle("/", httputil.NewSingleHostReverseProxy(target))
	mux.HandleFunc("GET /frame", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, shotFrame(r.URL.Query()["view"]))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	views := []shotView{
		{"web-list-1400", "/", 1400, 900}, {"web-list-390", "/", 390, 844},
		{"web-task-1400", "/task/" + task, 1400, 900}, {"web-task-390", "/task/" + task, 390, 844},
	}
	q := url.Values{}
	for _, v := range views {
		q.Add("view", v.String())
	}
	out := runChromium(t, chromium, 1400, 900, "--dump-dom", srv.URL+"/frame?"+q.Encode())
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`<pre id="fit-([a-z0-9-]+)">(.*?)</pre>`).FindAllSubmatch(out, -1) {
		got[string(m[1])] = html.UnescapeString(string(m[2]))
	}
	for _, v := range views {
		switch fit, ok := got[v.name]; {
		case !ok:
			t.Errorf("%s: no measurement (did the page load?)", v.name)
		case fit != "fits":
			t.Errorf("%s: the page is wider than its %d px: %s", v.name, v.width, fit)
		}
	}
	if *screenshots == "" {
		return
	}
	for _, v := range views {
		shot := filepath.Join(t.TempDir(), v.name+".png")
		runChromium(t, chromium, max(v.width, 500), v.height, "--hide-scrollbars", "--timeout=2000", "--screenshot="+shot,
			srv.URL+"/frame?view="+url.QueryEscape(v.String()))
		cutPNG(t, shot, v.width, v.height, filepath.Join(*screenshots, v.name+".png"))
	}
}

// shotView is a page of the web app at a size, named for its screenshot.
type shotView struct {
	name, path    string
	width, height int
}

func (v shotView) String() string {
	return fmt.Sprintf("%s %s %d %d", v.name, v.path, v.width, v.height)
}

// shotFrame is a page of one iframe per view, each at its size; once all have loaded, it
// writes under each whether its page fits its width, or the elements that reach past it.
func shotFrame(views []string) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><body style=\"margin:0\">\n")
	for _, s := range views {
		var v shotView
		fmt.Sscanf(s, "%s %s %d %d", &v.name, &v.path, &v.width, &v.height)
		fmt.Fprintf(&b, "<iframe name=%q src=%q width=\"%d\" height=\"%d\" style=\"border:0;display:block\"></iframe>\n",
			v.name, v.path, v.width, v.height)
	}
	b.WriteString(`<script>
window.addEventListener('load', function () {
  document.querySelectorAll('iframe').forEach(function (f) {
    var d = f.contentDocument, w = f.contentWindow.innerWidth, wide = [];
    d.querySelectorAll('body *').forEach(function (el) {
      var r = el.getBoundingClientRect();
      if (r.width && r.right > w + 1 && !el.closest('.grid-scroll, .box, .timeline-scroll, .audit-box') && wide.length < 5) wide.push(el.tagName + '.' + el.className + ' to ' + Math.round(r.right));
    });
    var pre = document.createElement('pre'); pre.id = 'fit-' + f.name;
    pre.textContent = d.documentElement.scrollWidth <= w && !wide.length ? 'fits' : 'page ' + d.documentElement.scrollWidth + ' px: ' + wide.join(', ');
    document.body.appendChild(pre);
  });
});
</script></body></html>`)
	return b.String()
}

// cutPNG writes the top left width×height of the PNG in to out, compressed.
func cutPNG(t *testing.T, in string, width, height int, out string) {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	cut := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(cut, cut.Bounds(), img, image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, cut); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d×%d, %d KB)", out, width, height, buf.Len()/1024)
}

var (
	bigPage  = flag.Int("webbig", 0, "TestServeWebBigPage: the events of the task whose page it times in Chromium (e.g. 10000); skipped without")
	bigTasks = flag.Int("webtasks", 1, "TestServeWebBigPage: how many tasks of -webbig events the store holds (copies of the first)")
)

// TestServeWebBigPage times, in headless Chromium, the list of a store of -webtasks tasks of
// -webbig events each and a task page, served by 'replay serve --http': the time to the
// server's last byte, to the page shown (DOMContentLoaded) and to the page loaded, as the
// browser's navigation timing has them, the first time a started server is asked for the page
// and again. It logs them and asserts nothing about them; it runs only when asked:
//
//	go test ./cmd/replay -run TestServeWebBigPage -webbig 10000 -v
//	go test ./cmd/replay -run TestServeWebBigPage -webbig 10000 -webtasks 50 -v
func TestServeWebBigPage(t *testing.T) {
	if *bigPage == 0 {
		t.Skip("times a big task page in Chromium only with -webbig EVENTS")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not on PATH: install Debian's chromium package to time the web app")
	}
	bin := testenv.ReplayBinary(t)
	path := filepath.Join(t.TempDir(), "tasklog.db")
	db, err := store.Open(path, &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	task := uuid.MustParse("50000000-0000-4000-8000-000000000000")
	ids := events.NewIDSource(rand.New(rand.NewSource(50)))
	webtest.MonorepoTask(t, db, task, *bigPage, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), ids)
	webtest.Copies(t, db, task, *bigTasks-1, ids)
	db.Close()
	base, _ := startWebServerArgs(t, bin, path, nil)
	target, _ := url.Parse(base)
	mux := http.NewServeMux()
	mux.Handle("/", httputil.NewSingleHostReverseProxy(target))
	// /frame?page=PATH loads PATH in a frame and writes the frame's navigation timing and what
	// it shows (the grid's requests, the list's tasks) into the framing page, for --dump-dom.
	mux.HandleFunc("GET /frame", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body><iframe id="p" src="%s" width="1400" height="900"></iframe><script>
window.addEventListener('load', function () {
  var f = document.getElementById('p'), n = f.contentWindow.performance.getEntriesByType('navigation')[0], d = f.contentDocument;
  var pre = document.createElement('pre'); pre.id = 'timing';
  pre.textContent = JSON.stringify({response: n.responseEnd, shown: n.domContentLoadedEventEnd, load: n.loadEventEnd,
    requests: d.querySelectorAll('.grid thead th.req').length, tasks: d.querySelectorAll('td.title a').length, bytes: n.encodedBodySize});
  document.body.appendChild(pre);
});
</script></body></html>`, html.EscapeString(r.URL.Query().Get("page")))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, page := range []struct{ name, path string }{{"the list", "/"}, {"a task page", "/task/" + task.String()}} {
		for run := range 2 {
			out := runChromium(t, chromium, 1400, 900, "--dump-dom", srv.URL+"/frame?page="+url.QueryEscape(page.path))
			m := regexp.MustCompile(`<pre id="timing">(.*?)</pre>`).FindSubmatch(out)
			if m == nil {
				t.Fatalf("no timing from the page:\n%.2000s", out)
			}
			var tm struct {
				Response, Shown, Load  float64
				Requests, Tasks, Bytes int
			}
			if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &tm); err != nil {
				t.Fatal(err)
			}
			shows := fmt.Sprintf("%d tasks", tm.Tasks)
			if page.path != "/" {
				shows = fmt.Sprintf("%d requests", tm.Requests)
			}
			if tm.Requests == 0 && tm.Tasks == 0 {
				t.Fatalf("%s shows nothing: %s", page.name, m[1])
			}
			when := "first load"
			if run > 0 {
				when = "again"
			}
			t.Logf("%s, %s (%d tasks of %d events): %s, %d KB: the server's last byte at %.0f ms, shown at %.0f ms, loaded at %.0f ms",
				page.name, when, *bigTasks, *bigPage, shows, tm.Bytes/1024, tm.Response, tm.Shown, tm.Load)
		}
	}
}
