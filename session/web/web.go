// Package web is the read-only web app 'replay serve --http' serves beside the hooks: the tasks
// of the store, newest first, and each task's report page, kept live with server-sent events as
// the task's log grows. Pages, style and script are embedded; text from the log is escaped as
// the report escapes it (control and bidirectional characters as escapes, HTML by the
// templates). Nothing here writes to the log.
package web

import (
	"bytes"
	"context"
	"crypto/subtle"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/session/report"
	"github.com/tasklog/tasklog/store"
)

// Source is the store the web app reads and the news of its changes: serve.Server is one.
type Source interface {
	// View runs fn on the store.
	View(ctx context.Context, fn func(db store.Store) error) error
	// Changed returns a channel closed at the next change of the store (or a moment it may have
	// changed).
	Changed() <-chan struct{}
}

// ErrNotLoopback is returned by CheckAddr for an address another machine could reach.
var ErrNotLoopback = errors.New("the web app and the HTTP hooks listen on a loopback address only")

// CheckAddr accepts HOST:PORT when HOST is a loopback address (127.0.0.1, ::1) or "localhost":
// the pages show prompts and paths, and have no login.
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want HOST:PORT, e.g. 127.0.0.1:8080: %w", addr, err)
	}
	if isLoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("%s: %w (127.0.0.1 or ::1): it shows prompts and paths without a login; give --http-public to listen on another address behind a token", addr, ErrNotLoopback)
}

// isLoopbackHost reports whether host (without a port; an IPv6 address with or without its
// brackets) names this machine's loopback interface: "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// auditBudget is how long after its request the list page may still read the audits of tasks
// it has not read before; those it has no time for are read in the background. A page that
// took that long to read the logs reads no audit.
const auditBudget = 300 * time.Millisecond

// reconnect is how long a browser waits before it opens an event stream that ended again.
const reconnect = time.Second

// keepAlive is how often an event stream with nothing to say sends a comment, so that proxies
// and browsers keep it open.
const keepAlive = 25 * time.Second

// Handler serves the web app:
//
//	/                  the tasks, newest first
//	/task/ID           the task's report page, live
//	/task/ID/part      a request's parts of the task page: each cell's evidence, the
//	                   context, the audit table (?at=EVENTS&t=REQUEST); or every event of
//	                   the timeline (?at=EVENTS&timeline=1)
//	/task/ID/events    server-sent events: one each time the task's log grew, its id the log's
//	                   last sequence number
//	/rules             every rule: in how many requests it was in the prompt, delivered,
//	                   shadowed, toggled off, excluded
//	/rule?id=ID        one rule, task by task
func Handler(src Source) http.Handler { return NewHandler(src, Options{}) }

// Options say who may read the web app.
type Options struct {
	// Token, when set, is the secret every request must carry (a public listener: see
	// Public): as the tasklog_token cookie, "Authorization: Bearer TOKEN", or once, to log a
	// browser in, as ?token=TOKEN, which sets the cookie and sends the browser to the same
	// address without it. A request without it is answered 401, whatever its Host. Without a
	// token only requests for a loopback Host are answered.
	Token string
}

// TokenCookie is the cookie a browser logged in to a public web app carries.
const TokenCookie = "tasklog_token"

// NewHandler is Handler with options.
func NewHandler(src Source, opts Options) http.Handler {
	_, hh := newHandler(src, opts)
	return hh
}

func newHandler(src Source, opts Options) (*handler, http.Handler) {
	h := &handler{src: src, cache: NewCache(), auditBudget: auditBudget}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.serving(h.list))
	mux.HandleFunc("GET /task/{id}", h.serving(h.task))
	mux.HandleFunc("GET /task/{id}/events", h.events)
	mux.HandleFunc("GET /task/{id}/part", h.serving(h.part))
	mux.HandleFunc("GET /rules", h.serving(h.rules))
	mux.HandleFunc("GET /rule", h.serving(h.rules))
	if opts.Token != "" {
		return h, headers(tokenOnly(opts.Token, mux), true)
	}
	return h, headers(mux, false)
}

// serving counts fn's requests as pages being served (see Cache.serve); an event stream, which
// lasts as long as its page is open, is not one.
func (h *handler) serving(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer h.cache.serve()()
		fn(w, r)
	}
}

// tokenOnly answers only the requests that carry the token (see Options.Token).
func tokenOnly(token string, next http.Handler) http.Handler {
	same := func(s string) bool { return subtle.ConstantTimeCompare([]byte(s), []byte(token)) == 1 }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Has("token") {
			if !same(q.Get("token")) {
				http.Error(w, "wrong token: give the one in the file 'replay serve --http-public' named", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(TokenCookie); err == nil && same(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && same(bearer) {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, "this web app needs its token: open it once with ?token=TOKEN, the token in the file 'replay serve --http-public' named", http.StatusUnauthorized)
	})
}

// headers forbid what the pages never need: frames from elsewhere, sniffed types, scripts from
// other origins; and, unless the app is public (behind its token), a Host that is not a
// loopback name, so that a web site whose name points at 127.0.0.1 (DNS rebinding) cannot read
// the pages.
func headers(next http.Handler, public bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !public && !loopbackHost(r.Host) {
			http.Error(w, "this server answers only requests for localhost, 127.0.0.1 or [::1]", http.StatusMisdirectedRequest)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "SAMEORIGIN")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline'; img-src 'self' data:")
		w.Header().Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a request's Host (with or without a port) names this machine's
// loopback interface.
func loopbackHost(hostport string) bool {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		hostport = h
	}
	return isLoopbackHost(hostport)
}

type handler struct {
	src   Source
	cache *Cache
	// auditBudget is auditBudget, a test's to lengthen where the clock must not decide.
	auditBudget time.Duration
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	var tasks, pending []Task
	deadline := time.Now().Add(h.auditBudget)
	err := h.src.View(r.Context(), func(db store.Store) error {
		var err error
		tasks, err = h.cache.tasks(r.Context(), db)
		if err != nil {
			return err
		}
		// The audits not kept are read while the page has time; the rest in the background,
		// shown pending until then. While the background reader is at work, the page leaves
		// them to it.
		reading := h.cache.busy()
		pending = h.cache.audits(r.Context(), db, tasks, func() bool { return !reading && time.Now().Before(deadline) })
		return nil
	})
	h.cache.auditLater(h.src, pending)
	if err != nil {
		http.Error(w, "read the tasks: "+err.Error(), http.StatusInternalServerError)
		return
	}
	var b bytes.Buffer
	if err := RenderList(&b, NewList(tasks, FilterOf(r.URL.Query()))); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

func (h *handler) rules(w http.ResponseWriter, r *http.Request) {
	var rules []Rule
	err := h.src.View(r.Context(), func(db store.Store) error {
		var err error
		rules, err = Rules(r.Context(), db, h.cache)
		return err
	})
	if err != nil {
		http.Error(w, "read the rules: "+err.Error(), http.StatusInternalServerError)
		return
	}
	one := r.URL.Path == "/rule"
	if one {
		want := r.URL.Query().Get("id")
		var found []Rule
		for _, rule := range rules {
			if rule.ID == want {
				found = append(found, rule)
			}
		}
		if len(found) == 0 {
			http.Error(w, "no rule of that id in this store's decisions: see /rules", http.StatusNotFound)
			return
		}
		rules = found
	}
	var b bytes.Buffer
	if err := RenderRules(&b, rules, one); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// parseTask reads a task id of the list.
func parseTask(s string) (uuid.UUID, error) { return uuid.Parse(s) }

// taskID reads the task of the path; false (after answering 404) when it is no task id.
func taskID(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		http.Error(w, "not a task id: want /task/UUID", http.StatusNotFound)
		return uuid.Nil, false
	}
	return id, true
}

func (h *handler) task(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	p, ok := h.page(w, r, id, 0)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(p.html)
}

// part answers a task page's request for the parts of one of its requests (?t=), at the
// length of the log the page shows (?at=): 409 when the log has grown since, as the page is
// about to be replaced (its event stream says so).
func (h *handler) part(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	at, err1 := strconv.Atoi(q.Get("at"))
	t, err2 := strconv.Atoi(q.Get("t"))
	timeline := q.Get("timeline") == "1"
	if err1 != nil || err2 != nil && !timeline || at <= 0 {
		http.Error(w, "want ?at=EVENTS&t=REQUEST or ?at=EVENTS&timeline=1", http.StatusBadRequest)
		return
	}
	p, ok := h.page(w, r, id, at)
	if !ok {
		return
	}
	var b bytes.Buffer
	if timeline {
		if err := report.RenderTimeline(&b, p.page); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	} else if err := report.RenderPart(&b, p.page, t); errors.Is(err, report.ErrNoRequest) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	} else if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// page is the task's page at the log's head, from the cache when the log has not grown since
// it was built; with at > 0, the page as it was at that length, or false after answering 409.
// False after answering the error otherwise.
func (h *handler) page(w http.ResponseWriter, r *http.Request, id uuid.UUID, at int) (*taskPage, bool) {
	var p *taskPage
	found := true
	err := h.src.View(r.Context(), func(db store.Store) error {
		head, err := db.Head(id)
		if errors.Is(err, store.ErrTaskNotFound) || err == nil && head.Seq == 0 {
			found = false
			return nil
		}
		if err != nil {
			return err
		}
		if at > 0 && uint64(at) != head.Seq {
			if p = h.cache.page(id, uint64(at)); p != nil {
				return nil
			}
			return errGrown
		}
		if p = h.cache.page(id, head.Seq); p != nil {
			return nil
		}
		p, err = buildPage(r.Context(), db, id)
		if err == nil {
			h.cache.keepPage(id, p)
		}
		return err
	})
	switch {
	case !found:
		http.Error(w, "no task "+id.String()+" in this store", http.StatusNotFound)
	case errors.Is(err, errGrown):
		http.Error(w, "the task's log has grown since this page was made: load it again", http.StatusConflict)
	case err != nil:
		http.Error(w, "read the task: "+err.Error(), http.StatusInternalServerError)
	case at > 0 && p.page.Events != at:
		http.Error(w, "the task's log has grown since this page was made: load it again", http.StatusConflict)
	default:
		return p, true
	}
	return nil, false
}

// timelineShown is how many of its last events a task page's timeline shows before the reader
// asks for the others.
const timelineShown = 500

// errGrown is a page asked for at a length of its log that has passed.
var errGrown = errors.New("the log has grown")

// taskPage is a task's page built and rendered, with the live script, at the log's length
// page.Events.
type taskPage struct {
	page report.Page
	html []byte
}

// buildPage builds and renders the task's page, its parts apart (fetched from /task/ID/part).
func buildPage(ctx context.Context, db store.Store, id uuid.UUID) (*taskPage, error) {
	page, err := report.Build(ctx, db, id)
	if err != nil {
		return nil, err
	}
	page.Parts = fmt.Sprintf("/task/%s/part?at=%d", id, page.Events)
	if page.Events > timelineShown {
		page.TimelineFrom = uint64(page.Events-timelineShown) + 1
	}
	var b bytes.Buffer
	if err := report.Render(&b, page); err != nil {
		return nil, err
	}
	// The page is the log up to its last event, seq Events: the stream starts there.
	live := strings.Replace(liveScript, "{{since}}", strconv.Itoa(page.Events), 1)
	html := bytes.Replace(b.Bytes(), []byte("</body>"), []byte(live+"</body>"), 1)
	return &taskPage{page: page, html: html}, nil
}

// events streams one event each time the task's log grew past what the page shows: the page
// says where it stands with ?since=SEQ, and a browser that reconnects sends the last id it saw
// (Last-Event-ID), which takes precedence. Either gets an event at once when the log grew
// meanwhile, and none when it did not. Without either the stream starts at the log's head.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	var seen uint64
	resumed := false
	for _, s := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("since")} {
		if n, err := strconv.ParseUint(s, 10, 64); err == nil && s != "" {
			seen, resumed = n, true
			break
		}
	}
	head := func() (uint64, error) {
		var seq uint64
		err := h.src.View(r.Context(), func(db store.Store) error {
			hd, err := db.Head(id)
			if errors.Is(err, store.ErrTaskNotFound) {
				return nil // not yet: its first event is news
			}
			seq = hd.Seq
			return err
		})
		return seq, err
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	first := true
	for {
		changed := h.src.Changed()
		seq, err := head()
		if err != nil {
			if r.Context().Err() == nil {
				fmt.Fprintf(w, "event: failed\ndata: %s\n\n", strings.ReplaceAll(err.Error(), "\n", " "))
				fl.Flush()
			}
			return
		}
		if first {
			// A browser whose stream ends tries again after this long (its default is 3 s).
			fmt.Fprintf(w, "retry: %d\n\n", reconnect.Milliseconds())
		}
		switch {
		case first && !resumed:
			// Where the stream starts: no update, and the id a reconnect sends back.
			fmt.Fprintf(w, "event: head\nid: %d\ndata: %d\n\n", seq, seq)
			seen = seq
		case seq > seen:
			fmt.Fprintf(w, "id: %d\ndata: %d\n\n", seq, seq)
			seen = seq
		case first:
			fmt.Fprint(w, ": up to date\n\n")
		}
		first = false
		fl.Flush()
		if !waitChange(r.Context(), changed, tick.C, func() {
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		}) {
			return
		}
	}
}

// waitChange waits for changed, calling keep at each tick meanwhile; false when ctx ended
// first.
func waitChange(ctx context.Context, changed <-chan struct{}, tick <-chan time.Time, keep func()) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-changed:
			return true
		case <-tick:
			keep()
		}
	}
}

// liveScript keeps a task page live: at each event of its stream it fetches the page again and
// puts its body in place of the one shown (the page's own script runs again on it), keeping the
// scroll position, and marks the last request "now". No reload, no polling.
const liveScript = `<style>
#live { position:fixed; right:12px; bottom:12px; z-index:10; background:#1d1d1f; color:#fff; border-radius:8px; padding:6px 10px; font-size:12px; max-width:calc(100vw - 24px); }
#live.off { background:#a1260d; }
.grid th.req.now { background:#1d1d1f; color:#fff; }
</style>
<div id="live" role="status" aria-live="polite">live</div>
<script data-live>
(function () {
  var url = location.pathname.replace(/\/+$/, ''), updates = 0, busy = false, again = false, es = null;
  function mark() {
    var ths = document.querySelectorAll('.grid thead th.req'), last = ths[ths.length - 1];
    if (last) { last.classList.add('now'); last.setAttribute('aria-current', 'true'); }
    var b = document.getElementById('live');
    if (!b) { b = document.createElement('div'); b.id = 'live'; b.setAttribute('role', 'status'); document.body.appendChild(b); }
    b.className = '';
    b.textContent = 'live · now: ' + (last ? last.title.split(' · ')[0] : 'no request yet') + ' · ' + ths.length + (ths.length === 1 ? ' request' : ' requests') + (updates ? ' · updated ' + new Date().toLocaleTimeString() : '');
    document.body.setAttribute('data-updates', String(updates));
    if (es && es.readyState === 1) document.body.setAttribute('data-live', 'open');
  }
  // keep notes what the reader set on the page: the cell selected (by its rule and request), the
  // filters, and the control that has the focus; restore puts them back on the new page, or,
  // with no cell selected, scrolls the grid to the newest request.
  function keep() {
    var k = {}, c = document.querySelector('.grid .cell[aria-selected="true"]'), a = document.activeElement;
    if (c && c.closest('tr')) { k.name = c.closest('tr').dataset.name; k.t = c.cellIndex; k.cellFocused = a === c; }
    ['filter', 'changed', 'jump', 'audit-req'].forEach(function (id) { var el = document.getElementById(id); if (el) k[id] = el.type === 'checkbox' ? el.checked : el.value; });
    if (a && a.id && a !== document.body) { k.focus = a.id; if (typeof a.selectionStart === 'number') k.sel = [a.selectionStart, a.selectionEnd]; }
    return k;
  }
  function restore(k) {
    var f = document.getElementById('filter'), ch = document.getElementById('changed'), au = document.getElementById('audit-req');
    if (f && k.filter) { f.value = k.filter; f.dispatchEvent(new Event('input')); }
    if (ch && k.changed) { ch.checked = true; ch.dispatchEvent(new Event('change')); }
    var cell = null;
    if (k.name !== undefined) {
      Array.prototype.forEach.call(document.querySelectorAll('.grid tbody tr'), function (tr) { if (tr.dataset.name === k.name && tr.cells[k.t]) cell = tr.cells[k.t]; });
    }
    if (cell) cell.click();
    else { var g = document.querySelector('.grid-scroll'); if (g) g.scrollLeft = g.scrollWidth; }
    if (au && k['audit-req'] !== undefined && !cell) { au.value = k['audit-req']; au.dispatchEvent(new Event('change')); }
    var el = k.focus && document.getElementById(k.focus);
    if (el && !k.cellFocused) { el.focus({preventScroll: true}); if (k.sel && el.setSelectionRange) el.setSelectionRange(k.sel[0], k.sel[1]); }
  }
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(url, {cache: 'no-store'}).then(function (r) {
      if (!r.ok) throw new Error(r.status + ' ' + r.statusText);
      return r.text();
    }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, 'text/html'), code = [];
      doc.body.querySelectorAll('script').forEach(function (s) { if (!s.hasAttribute('data-live')) code.push(s.textContent); s.remove(); });
      var x = window.scrollX, y = window.scrollY, kept = keep();
      if (doc.body.hasAttribute('data-parts')) document.body.setAttribute('data-parts', doc.body.getAttribute('data-parts'));
      document.body.replaceChildren.apply(document.body, Array.prototype.map.call(doc.body.childNodes, function (n) { return document.importNode(n, true); }));
      code.forEach(function (c) { var s = document.createElement('script'); s.textContent = c; document.body.appendChild(s); });
      restore(kept);
      window.scrollTo(x, y);
      updates++; mark();
    }).catch(function (e) {
      var b = document.getElementById('live'); if (b) { b.className = 'off'; b.textContent = 'could not update: ' + e.message; }
    }).then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  es = new EventSource(url + '/events?since={{since}}');
  es.onmessage = refresh;
  es.addEventListener('failed', function (e) { var b = document.getElementById('live'); if (b) { b.className = 'off'; b.textContent = 'the server could not read the log: ' + e.data; } });
  es.onerror = function () { var b = document.getElementById('live'); if (b && es.readyState !== 1) { b.className = 'off'; b.textContent = 'reconnecting…'; } };
  es.onopen = function () { document.body.setAttribute('data-live', 'open'); var b = document.getElementById('live'); if (b && b.className === 'off') mark(); };
  mark();
})();
</script>
`
