package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/session/report"
	"github.com/tasklog/tasklog/store"
)

// The report page is laid out by a real browser: the test renders a short task (the monorepo
// fixture) and a 400-turn one, loads each in headless Chromium at a desktop (1400×900) and a
// phone (390×844) size with a probe script appended, and checks the geometry the probe reports
// and what Home, End and the arrow keys do. With -update it also
// rewrites the screenshots the README shows:
//
//	go test ./cmd/replay -run TestReportPage -update
//
// It needs Debian's chromium package on PATH and skips without it.
func TestReportPage(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not on PATH: install Debian's chromium package to check the report page's layout")
	}
	dir := t.TempDir()
	writeReportPage(t, dir, "short", monorepoReport(t))
	writeReportPage(t, dir, "long", longReport(t, 400))
	// Each page at each size is an iframe of that size (a headless window is at least 500 px
	// wide): one browser run measures them all.
	views := []pageView{
		{"short", "desktop", 1400, 900}, {"short", "phone", 390, 844},
		{"long", "desktop", 1400, 900}, {"long", "phone", 390, 844},
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	got := probePages(t, chromium, dir, srv.URL, views)
	for _, v := range views {
		t.Run(v.name(), func(t *testing.T) {
			m, ok := got[v.name()]
			if !ok {
				t.Fatalf("no measurements for %s (did the page's script fail?)", v.name())
			}
			checkLayout(t, m, v.width, v.width > 900, v.page == "long")
		})
	}
	if *update {
		root := testenv.RepoRoot(t)
		for _, shot := range []struct {
			view pageView
			file string
		}{
			{views[0], "report.png"},
			{views[1], "report-phone.png"},
			{views[2], "report-long.png"},
		} {
			screenshot(t, chromium, dir, srv.URL, shot.view, filepath.Join(root, "testdata", shot.file))
		}
	}
}

// pageView is a report page seen in a viewport of a size.
type pageView struct {
	page, size    string
	width, height int
}

func (v pageView) name() string { return v.page + "-" + v.size }

// frame is a page holding one iframe per view, each showing its page (with the probe) at the
// view's size.
func frame(t *testing.T, dir, name string, views []pageView) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("<!doctype html><html><body style=\"margin:0\">\n")
	for _, v := range views {
		fmt.Fprintf(&b, "<iframe name=%q src=\"%s-probe.html\" width=\"%d\" height=\"%d\" style=\"border:0;display:block\"></iframe>\n",
			v.name(), v.page, v.width, v.height)
	}
	b.WriteString("</body></html>\n")
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// pageLayout is what the probe measures, in CSS pixels of the viewport.
type pageLayout struct {
	ViewportWidth int  `json:"vw"`
	PageWidth     int  `json:"docW"`
	Grid          rect `json:"grid"`
	PanelBox      rect `json:"panel"`
	GridScrollW   int  `json:"gridScrollW"`
	GridClientW   int  `json:"gridClientW"`
	Rows, Turns   int
	Loaded        cell `json:"loaded"` // the focused cell once the page loaded
	End, Home     cell
	Right         cell
	CtrlEnd       cell `json:"ctrlEnd"`
	ScrollLeft    float64
	RuleColumn    rect `json:"ruleCol"`
	Focused       rect `json:"focused"`
	Detail        string
	// The accessible name of the focused cell after Ctrl+End (the last rule at the last
	// request), how many cells have one (only the focused cell is named), and what it should say.
	FocusLabel  string `json:"label"`
	CellLabels  int    `json:"cellLabels"`
	LastRule    string `json:"lastRule"`
	LastRequest string `json:"lastReq"`
	Wide        string // the first elements that reach past the viewport, for a message
	DocHeight   int    `json:"docH"`
	// The tools: rows left by a filter on the last rule's name (and whether that row is one),
	// requests left by "only requests where a rule changed", where End goes then, and a jump to
	// the last prompt (the request wanted, the one focused).
	FilterRows   int  `json:"filterRows"`
	FilterLast   bool `json:"filterLast"`
	ChangedTurns int  `json:"changedTurns"`
	AllTurns     int  `json:"allTurns"`
	ChangedEnd   cell `json:"changedEnd"`
	EndVisible   bool `json:"endVisible"`
	JumpWant     int  `json:"jumpWant"`
	JumpGot      int  `json:"jumpGot"`
	Prompts      int  `json:"prompts"`
	// The first timeline row's summary and first column.
	Summary  rect `json:"summary"`
	FirstCol rect `json:"firstCol"`
	// The audit table: the requests it shows (one, the focused cell's), its rows and box, and
	// the request shown once the first is picked from its list.
	AuditShown  []int `json:"auditShown"`
	AuditFocus  int   `json:"auditFocus"`
	AuditRows   int   `json:"auditRows"`
	AuditBox    rect  `json:"auditBox"`
	AuditPicked []int `json:"auditPicked"`
	AuditWide   bool  `json:"auditWide"`
}

type rect struct{ L, T, R, B float64 }

// cell is a grid cell's row and turn index; -1 when the focus is not on a cell.
type cell struct{ R, T int }

func (a rect) overlaps(b rect) bool {
	return math.Min(a.R, b.R) > math.Max(a.L, b.L) && math.Min(a.B, b.B) > math.Max(a.T, b.T)
}

func checkLayout(t *testing.T, m pageLayout, width int, wide, long bool) {
	t.Helper()
	if m.ViewportWidth != width {
		t.Fatalf("viewport is %d px wide, want %d (did chromium take --window-size?)", m.ViewportWidth, width)
	}
	if m.PageWidth > m.ViewportWidth {
		t.Errorf("the page is %d px wide in a %d px viewport: it scrolls sideways (%s)", m.PageWidth, m.ViewportWidth, m.Wide)
	}
	if m.Grid.R > float64(m.ViewportWidth)+0.5 {
		t.Errorf("the grid ends at x=%.0f, past the viewport's %d px", m.Grid.R, m.ViewportWidth)
	}
	if m.Grid.overlaps(m.PanelBox) {
		t.Errorf("the evidence panel %+v covers the grid %+v", m.PanelBox, m.Grid)
	}
	if wide && m.PanelBox.L < m.Grid.R {
		t.Errorf("on a wide screen the panel should be beside the grid: panel left %.0f < grid right %.0f", m.PanelBox.L, m.Grid.R)
	}
	if !wide && m.PanelBox.T < m.Grid.B {
		t.Errorf("on a narrow screen the panel should be below the grid: panel top %.0f < grid bottom %.0f", m.PanelBox.T, m.Grid.B)
	}
	if m.Loaded.R < 0 {
		t.Errorf("no grid cell has the focus after load: the arrow keys would not work at once")
	}
	last := cell{m.Rows - 1, m.Turns - 1}
	if m.End.T != m.Turns-1 || m.End.R != m.Loaded.R {
		t.Errorf("End moved to %+v, want the last turn of row %d (%d)", m.End, m.Loaded.R, m.Turns-1)
	}
	if m.Home.T != 0 || m.Home.R != m.Loaded.R {
		t.Errorf("Home moved to %+v, want turn 0 of row %d", m.Home, m.Loaded.R)
	}
	if m.Right != (cell{m.Loaded.R, 1}) {
		t.Errorf("→ after Home moved to %+v, want turn 1", m.Right)
	}
	if m.CtrlEnd != last {
		t.Errorf("Ctrl+End moved to %+v, want the last cell %+v", m.CtrlEnd, last)
	}
	if want := m.LastRule + " at " + m.LastRequest + ": "; !strings.HasPrefix(m.FocusLabel, want) || m.CellLabels != 1 {
		t.Errorf("the focused cell is named %q (%d cells named), want one named %q and its state", m.FocusLabel, m.CellLabels, want)
	}
	if !strings.Contains(m.Detail, fmt.Sprintf("turn %d", m.Turns)) {
		t.Errorf("the evidence panel does not follow the focus to turn %d: %q", m.Turns, m.Detail)
	}
	if !m.FilterLast || m.FilterRows < 1 || m.FilterRows >= m.Rows {
		t.Errorf("filtering on the last rule's name left %d of %d rows (the last one shown: %v)", m.FilterRows, m.Rows, m.FilterLast)
	}
	if m.ChangedTurns < 1 || m.ChangedTurns > m.Turns || m.AllTurns != m.Turns || !m.EndVisible {
		t.Errorf("only changed requests: %d of %d shown (%d after), End on a shown one: %v", m.ChangedTurns, m.Turns, m.AllTurns, m.EndVisible)
	}
	if m.Prompts < 1 || m.JumpGot != m.JumpWant {
		t.Errorf("the jump to the last of %d prompts focused request %d, want %d", m.Prompts, m.JumpGot, m.JumpWant)
	}
	if len(m.AuditShown) != 1 || m.AuditShown[0] != m.AuditFocus {
		t.Errorf("the audit table shows requests %v, want the focused cell's, %d, alone", m.AuditShown, m.AuditFocus)
	}
	if m.AuditRows < 1 || m.AuditRows > m.Rows {
		t.Errorf("the audit table of a request has %d rows, want 1 to %d (one per rule file)", m.AuditRows, m.Rows)
	}
	if m.AuditBox.L < -0.5 || m.AuditBox.R > float64(m.ViewportWidth)+0.5 || m.AuditWide {
		t.Errorf("the audit table %+v is not inside the %d px viewport, or its rows need sideways scrolling (%v)", m.AuditBox, m.ViewportWidth, m.AuditWide)
	}
	if m.AuditBox.overlaps(m.PanelBox) {
		t.Errorf("the evidence panel %+v covers the audit table %+v", m.PanelBox, m.AuditBox)
	}
	if len(m.AuditPicked) != 1 || m.AuditPicked[0] != 0 {
		t.Errorf("picking the first request in the audit's list shows %v, want [0]", m.AuditPicked)
	}
	if m.Summary.L < -0.5 || m.Summary.R > float64(m.ViewportWidth)+0.5 {
		t.Errorf("the timeline's summary %+v is not on screen in a %d px viewport", m.Summary, m.ViewportWidth)
	}
	if !wide && m.Summary.T > m.FirstCol.T {
		t.Errorf("on a narrow screen the timeline's summary should be read first: it is at y=%.0f, below the row's first column at y=%.0f", m.Summary.T, m.FirstCol.T)
	}
	if long {
		if m.ChangedTurns >= m.Turns {
			t.Errorf("every one of the %d requests changed a rule? only changed shows %d", m.Turns, m.ChangedTurns)
		}
		if m.DocHeight > 4*900 {
			t.Errorf("a %d-request report is %d px tall: more than four screens", m.Turns, m.DocHeight)
		}
		if m.GridScrollW <= m.GridClientW {
			t.Errorf("400 turns fit in %d px without scrolling (%d px of grid)?", m.GridClientW, m.GridScrollW)
		}
		if m.ScrollLeft <= 0 {
			t.Errorf("the grid did not scroll to the last turn's cell (scrollLeft %.0f)", m.ScrollLeft)
		}
		if math.Abs(m.RuleColumn.L-m.Grid.L) > 2 {
			t.Errorf("the rule column moved with the scroll: left %.0f, grid left %.0f", m.RuleColumn.L, m.Grid.L)
		}
		if m.Focused.L < m.RuleColumn.R-1 || m.Focused.R > m.Grid.R+1 {
			t.Errorf("the focused cell %+v is not in view between the rule column (right %.0f) and the grid's edge (%.0f)",
				m.Focused, m.RuleColumn.R, m.Grid.R)
		}
	} else if wide && m.GridScrollW > m.GridClientW {
		t.Errorf("a 5-turn grid scrolls sideways on a wide screen (%d > %d px)", m.GridScrollW, m.GridClientW)
	}
}

// probeHead goes first in the page's <head>: it records the first element the page focuses.
// (Frames of one window take the focus from each other, so what has it later says nothing.)
const probeHead = `<script>document.addEventListener('focusin', function (e) { if (!window.firstFocus) window.firstFocus = e.target; });</script>
`

// probe runs after the page's own script: it measures, presses keys on the grid's current cell
// (the one its roving tabindex marks), and writes what it saw as JSON into <pre id="probe-VIEW">
// in the framing page, for --dump-dom.
const probe = `<script>
(function () {
  function box(el) { var r = el.getBoundingClientRect(); return {L: r.left, T: r.top, R: r.right, B: r.bottom}; }
  function pos(c) { return c && c.classList.contains('cell') ? {R: c.parentNode.sectionRowIndex, T: c.cellIndex - 1} : {R: -1, T: -1}; }
  function current() { return document.querySelector('.cell[tabindex="0"]'); }
  function key(k, ctrl) {
    current().dispatchEvent(new KeyboardEvent('keydown', {key: k, ctrlKey: !!ctrl, bubbles: true, cancelable: true}));
    return pos(current());
  }
  var g = document.querySelector('table.grid').parentElement; // the grid's scrolling box
  var m = {vw: window.innerWidth, docW: document.documentElement.scrollWidth, grid: box(g),
    panel: box(document.getElementById('detail')), gridScrollW: g.scrollWidth, gridClientW: g.clientWidth,
    Rows: document.querySelectorAll('.grid tbody tr').length, Turns: document.querySelectorAll('.grid thead th.req').length,
    loaded: pos(window.firstFocus)};
  if (current()) { m.End = key('End'); m.Home = key('Home'); m.Right = key('ArrowRight'); m.ctrlEnd = key('End', true); }
  m.label = current() ? current().getAttribute('aria-label') || '' : ''; m.cellLabels = document.querySelectorAll('.grid .cell[aria-label]').length;
  m.lastRule = document.querySelector('.grid tbody tr:last-child td.rule div').textContent;
  m.lastReq = document.querySelector('.grid thead th.req:last-child').title.split(' · ')[0];
  m.ScrollLeft = g.scrollLeft; m.ruleCol = box(document.querySelector('.grid tbody tr:last-child td.rule'));
  m.focused = box(current() || document.body); m.Detail = document.getElementById('detail').textContent.replace(/\s+/g, ' ');
  // The tools: a rule filter, the requests that changed, a jump to a prompt.
  m.docH = document.documentElement.scrollHeight;
  var vis = function (sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)).filter(function (el) { return el.offsetParent !== null; }).length; };
  var last = document.querySelector('.grid tbody tr:last-child');
  var filter = document.getElementById('filter');
  filter.value = last.dataset.name.split(' ')[0]; filter.dispatchEvent(new Event('input'));
  m.filterRows = vis('.grid tbody tr'); m.filterLast = last.offsetParent !== null;
  filter.value = ''; filter.dispatchEvent(new Event('input'));
  var changed = document.getElementById('changed');
  changed.checked = true; changed.dispatchEvent(new Event('change'));
  m.changedTurns = vis('.grid thead th.req'); m.afterChanged = pos(current()); m.changedEnd = key('End');
  m.endVisible = current().offsetParent !== null;
  changed.checked = false; changed.dispatchEvent(new Event('change'));
  m.allTurns = vis('.grid thead th.req');
  var jump = document.getElementById('jump');
  jump.selectedIndex = jump.options.length - 1; jump.dispatchEvent(new Event('change'));
  m.jumpWant = +jump.value; m.jumpGot = pos(current()).T; m.prompts = jump.options.length;
  var shown = function () { return Array.prototype.slice.call(document.querySelectorAll('.audit-box')).filter(function (el) { return el.offsetParent !== null; }); };
  var ab = shown();
  m.auditShown = ab.map(function (el) { return +el.dataset.a; }); m.auditFocus = pos(current()).T;
  if (ab.length) { m.auditBox = box(ab[0]); m.auditRows = ab[0].querySelectorAll('tbody tr').length; m.auditWide = ab[0].scrollWidth > ab[0].clientWidth + 1; }
  var pick = document.getElementById('audit-req');
  pick.selectedIndex = 0; pick.dispatchEvent(new Event('change'));
  m.auditPicked = shown().map(function (el) { return +el.dataset.a; });
  var row = document.querySelector('.timeline tbody tr:not(.prompt-head)');
  m.summary = box(row.lastElementChild); m.firstCol = box(row.firstElementChild);
  m.Wide = Array.prototype.slice.call(document.querySelectorAll('body *')).filter(function (el) { return el.getBoundingClientRect().right > window.innerWidth + 1; }).slice(0, 5).map(function (el) { return el.tagName + '.' + el.className + '#' + el.id; }).join(' ');
  var pre = parent.document.createElement('pre'); pre.id = 'probe-' + window.name; pre.textContent = JSON.stringify(m);
  parent.document.body.appendChild(pre);
})();
</script>
`

var probeOut = regexp.MustCompile(`(?s)<pre id="probe-([a-z-]+)">(.*?)</pre>`)

// probePages loads every view in one browser run and returns the probe's measurements by view.
func probePages(t *testing.T, chromium, dir, url string, views []pageView) map[string]pageLayout {
	t.Helper()
	for _, page := range []string{"short", "long"} {
		b, err := os.ReadFile(filepath.Join(dir, page+".html"))
		if err != nil {
			t.Fatal(err)
		}
		withProbe := bytes.Replace(b, []byte("<head>"), []byte("<head>"+probeHead), 1)
		withProbe = bytes.Replace(withProbe, []byte("</body>"), []byte(probe+"</body>"), 1)
		if err := os.WriteFile(filepath.Join(dir, page+"-probe.html"), withProbe, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := runChromium(t, chromium, 1400, 900, "--dump-dom", url+"/"+frame(t, dir, "probe.html", views))
	got := map[string]pageLayout{}
	for _, sub := range probeOut.FindAllSubmatch(out, -1) {
		var m pageLayout
		if err := json.Unmarshal([]byte(html.UnescapeString(string(sub[2]))), &m); err != nil {
			t.Fatalf("probe output %s: %v", sub[2], err)
		}
		got[string(sub[1])] = m
	}
	if len(got) == 0 {
		t.Logf("chromium's DOM has no probe output:\n%.2000s", out)
	}
	return got
}

// screenshot writes a PNG of the view: the browser's window (at least 500 px wide) shows the
// page in an iframe of the view's size at its top left, and the image is cut to that.
func screenshot(t *testing.T, chromium, dir, url string, v pageView, out string) {
	t.Helper()
	shot := filepath.Join(dir, v.name()+".png")
	plain := pageView{v.page + "", v.size, v.width, v.height}
	name := frame(t, dir, "shot-"+v.name()+".html", []pageView{plain})
	// The screenshot shows the page as a reader gets it, without the probe.
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(v.page+"-probe.html"), []byte(v.page+".html"), 1)
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	runChromium(t, chromium, max(v.width, 500), v.height, "--hide-scrollbars", "--screenshot="+shot, url+"/"+name)
	cutPNG(t, shot, v.width, v.height, out)
	t.Logf("wrote %s (%d×%d)", out, v.width, v.height)
}

func runChromium(t *testing.T, chromium string, width, height int, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), fmt.Sprintf("--window-size=%d,%d", width, height)}, args...)
	cmd := exec.CommandContext(ctx, chromium, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

func writeReportPage(t *testing.T, dir, name string, data report.Page) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.Render(&b, data); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".html")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// monorepoReport is the report of the monorepo fixture, recorded as the demo records it.
func monorepoReport(t *testing.T) report.Page {
	t.Helper()
	data := filepath.Join(testenv.RepoRoot(t), "testdata")
	db := openTestDB(t)
	s, _, err := recordScript(db, filepath.Join(data, "sessions", "monorepo.jsonl"), fixtureWorkspace(data, "monorepo"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(context.Background(), db, s.Task())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// longReport is the report of a task of n turns (see longTask).
func longReport(t *testing.T, n int) report.Page {
	t.Helper()
	db := openTestDB(t)
	task := longTask(t, db, n)
	rep, err := report.Build(context.Background(), db, task)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Turns) != n {
		t.Fatalf("%d decisions, want %d", len(rep.Turns), n)
	}
	return rep
}

// longTask records a task of n turns in which an agent works its way through the folders of a
// monorepo: each turn reads a file, seven turns per folder, so the scoped rules come and go.
func longTask(t testing.TB, db store.Store, n int) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	ws := fstest.MapFS{
		".clinerules/general.md":  {Data: []byte("Run the tests before you finish.\n")},
		".clinerules/frontend.md": {Data: []byte("---\npaths: [\"apps/web/**\"]\n---\nUse the design tokens.\n")},
		".clinerules/backend.md":  {Data: []byte("---\npaths: [\"services/api/**\"]\n---\nValidate input.\n")},
		".clinerules/billing.md":  {Data: []byte("---\npaths: [\"services/billing/**\"]\n---\nMoney is integer cents.\n")},
		".clinerules/docs.md":     {Data: []byte("---\npaths: [\"docs/**\"]\n---\nWrite in the present tense.\n")},
		".clinerules/infra.md":    {Data: []byte("---\npaths: [\"infra/**\"]\n---\nNo manual changes in production.\n")},
	}
	task := uuid.MustParse("4a0c1d2e-3f40-4152-8364-758697a8b9ca")
	s, err := session.Open(ctx, db, task, session.Options{
		Roots:   []session.Root{{Path: "/ws", FS: ws}},
		Runtime: events.Runtime{Name: "my-agent", Version: "1.4.0"},
		Now:     func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) },
		IDs:     events.NewIDSource(rand.New(rand.NewSource(400))),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.UserMessage(ctx, "Tidy up every package of the monorepo."); err != nil {
		t.Fatal(err)
	}
	folders := []string{"apps/web/src", "services/api", "services/billing", "docs", "infra/terraform"}
	for i := range n {
		params, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("%s/file%d.ts", folders[(i/7)%len(folders)], i)})
		if _, err := s.ToolCall(ctx, "read_file", fmt.Sprintf("call_%d", i), params); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return task
}

func openTestDB(t testing.TB) store.Store {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "t.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
