package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/rules"
	testsamples "github.com/tasklog/tasklog/session/replaytest/samples"
	"github.com/tasklog/tasklog/store"
)

// sampleRulesWorkspace copies the real rule files of the samples into the folders their tools
// read (Cline, Claude Code, Windsurf, Copilot), 62 rules of every shape; the
// test skips with one line when the samples are missing.
func sampleRulesWorkspace(b testing.TB) string {
	b.Helper()
	src := testsamples.Dir(b, "rules")
	dir := b.TempDir()
	for kind, folder := range map[string]string{
		"clinerules":           ".clinerules",
		"claude-rules":         ".claude/rules",
		"windsurf":             ".windsurf/rules",
		"copilot-instructions": ".github/instructions",
	} {
		entries, err := os.ReadDir(filepath.Join(src, kind))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, folder), 0o755); err != nil {
			b.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(src, kind, e.Name()))
			if err != nil {
				b.Fatal(err)
			}
			name := e.Name()
			if kind == "copilot-instructions" && !strings.HasSuffix(name, ".instructions.md") {
				name = strings.TrimSuffix(name, ".md") + ".instructions.md"
			}
			if err := os.WriteFile(filepath.Join(dir, folder, name), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return dir
}

// realisticTurn is the records of one turn of a coding agent in a monorepo, as its hooks record
// them: the prompt, then reads, edits, writes, searches and shell commands (Claude Code's tool
// names and inputs), the file writes of the edits and a tab snapshot now and then, n records in
// all. i numbers the turn, so paths and ids differ from turn to turn.
func realisticTurn(i, n int) []agentlog.Record {
	const root = "/home/dev/shop"
	areas := []string{"apps/web/src/components", "apps/api/src/routes", "packages/core/src", "packages/ui/src",
		"internal-packages/database/prisma", "docs/guides", "apps/desktop/src", ".github/workflows"}
	exts := []string{"tsx", "ts", "ts", "tsx", "prisma", "md", "ts", "yml"}
	path := func(j int) string {
		a := (i*7 + j) % len(areas)
		return fmt.Sprintf("%s/%s/file%d.%s", root, areas[a], (i+j)%40, exts[a])
	}
	body := strings.Repeat("export function handler(req: Request): Response { return json(req) }\n", 4)
	recs := make([]agentlog.Record, 0, n)
	add := func(key string, p events.Payload, trigger bool) {
		recs = append(recs, agentlog.Record{Key: fmt.Sprintf("t%d\x00%s", i, key), Payload: p, Trigger: trigger})
	}
	params := func(v map[string]any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	add("prompt", &events.UserMessage{Text: fmt.Sprintf("The checkout page shows the wrong total when a coupon "+
		"is applied twice. Look at %s and the routes under apps/api/src/routes, fix it, and add a test. "+
		"Keep the public API of packages/core as it is and run the tests before you stop.", path(0)[len(root)+1:])}, true)
	for j := 1; len(recs) < n; j++ {
		id := fmt.Sprintf("toolu_%06d_%03d", i, j)
		switch j % 10 {
		case 0, 1, 2, 3:
			add(id, &events.ToolCall{Tool: "Read", ID: id, Cwd: root, Params: params(map[string]any{"file_path": path(j)})}, true)
		case 4, 5:
			add(id, &events.ToolCall{Tool: "Edit", ID: id, Cwd: root, Params: params(map[string]any{"file_path": path(j),
				"old_string": body[:120], "new_string": body[:160], "replace_all": false})}, true)
			add(id+"w", &events.FileWrite{Path: path(j)[len(root)+1:], Op: events.OpEdit}, false)
		case 6:
			add(id, &events.ToolCall{Tool: "Write", ID: id, Cwd: root, Params: params(map[string]any{"file_path": path(j),
				"content": body + body})}, true)
			add(id+"w", &events.FileWrite{Path: path(j)[len(root)+1:], Op: events.OpCreate}, false)
		case 7:
			add(id, &events.ToolCall{Tool: "Grep", ID: id, Cwd: root, Params: params(map[string]any{"pattern": "applyCoupon\\(",
				"path": root + "/apps", "output_mode": "content", "-n": true})}, true)
		case 8:
			add(id, &events.ToolCall{Tool: "Bash", ID: id, Cwd: root, Params: params(map[string]any{
				"command": "pnpm --filter @shop/web test -- --run src/components/checkout", "description": "Run the checkout tests"})}, true)
		case 9:
			open := make([]string, 8)
			for k := range open {
				open[k] = path(j + k)[len(root)+1:]
			}
			add(id, &events.TabSnapshot{Open: open, Visible: open[:2]}, false)
		}
	}
	return recs[:n]
}

// buildRealisticTask writes, without fsync, a task of at least n events recorded as a Claude
// Code session's hooks record them over the samples' rule files: every turn a prompt and about
// 80 tool calls, file writes and tab snapshots, then a decision and its delivery, so that about
// 1.2% of the events are decisions. It returns the store, the task and the mean size of an
// event's data and of a decision's.
func buildRealisticTask(b *testing.B, n int) (store.Store, uuid.UUID, float64, float64) {
	b.Helper()
	ctx := context.Background()
	db := openDB(b)
	task := recordRealisticTask(b, db, n, false)
	var all, dec, ndec float64
	var count float64
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			b.Fatal(err)
		}
		count++
		all += float64(len(ev.Data))
		if ev.Type == events.TypeDecision {
			ndec++
			dec += float64(len(ev.Data))
		}
	}
	b.Logf("%.0f events, %.2f%% decisions of %.0f bytes on average; %.0f bytes of data an event", count, 100*ndec/count, dec/ndec, all/count)
	return db, task, all / count, dec / ndec
}

// recordRealisticTask records in db, over the samples' rule files, turns of the shop workspace
// (recordRealisticTurn) until the task holds n events, and returns the task. With reopen the
// session is opened again for every turn, as a 'replay hook' process opens it for its hook.
func recordRealisticTask(b *testing.B, db store.Store, n int, reopen bool) uuid.UUID {
	b.Helper()
	ctx := context.Background()
	ws := sampleRulesWorkspace(b)
	a := openRealisticAgent(b, db, ws, "realistic")
	task := a.Task()
	for i := 0; a.Version() < uint64(n); i++ {
		if reopen && i > 0 {
			if err := a.Close(); err != nil {
				b.Fatal(err)
			}
			a = openRealisticAgent(b, db, ws, "realistic")
		}
		recordRealisticTurn(b, ctx, a, i)
	}
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}
	return task
}

// openRealisticAgent opens, in db, the Claude Code session of the shop workspace whose rule
// files are those in ws.
func openRealisticAgent(b *testing.B, db store.Store, ws, session string) *AgentSession {
	b.Helper()
	a, err := OpenAgent(context.Background(), db, agentlog.TaskID(agentlog.ClaudeCode, session), AgentOptions{Agent: agentlog.ClaudeCode,
		Started: &events.TaskStarted{Roots: []string{"/home/dev/shop"}, Cwd: "/home/dev/shop",
			Runtime: events.Runtime{Name: string(agentlog.ClaudeCode)}},
		RootFS: func(string) fs.FS { return os.DirFS(ws) }})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// recordRealisticTurns records turns of 80 records (realisticTurn), each followed by a decision
// and its delivery, until done says so before turn i.
func recordRealisticTurns(b *testing.B, a *AgentSession, done func(i int) bool) {
	b.Helper()
	ctx := context.Background()
	for i := 0; !done(i); i++ {
		recordRealisticTurn(b, ctx, a, i)
	}
}

// recordRealisticTurn records turn i (realisticTurn) and its decision and delivery.
func recordRealisticTurn(b *testing.B, ctx context.Context, a *AgentSession, i int) {
	b.Helper()
	if _, err := a.RecordHook(ctx, realisticTurn(i, 80)); err != nil {
		b.Fatal(err)
	}
	if _, _, err := a.DecideAndDeliver(ctx, "PreToolUse", events.ChannelTool, fmt.Sprintf("t%d\x00decide", i)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkVerifyRealistic is 'replay verify' (Verify: the store's chain check beside the
// replay of every decision and delivery) of a task recorded as real hooks record one, over real
// rule files: about 1.2% decisions, each over the samples' 62 rules. It reports events per second of the
// wall clock and of the process's CPU time, bytes allocated per event and the mean size of an
// event's data and of a decision's. The collector runs at the process's setting ($GOGC, or Go's
// default), as in a program that embeds tasklog; BenchmarkVerifyCollector compares it with
// the setting 'replay verify' runs at. Skipped with -short or without the samples.
func BenchmarkVerifyRealistic(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 200k-event task; skipped with -short")
	}
	const n = 200_000
	ctx := context.Background()
	db, task, perEvent, perDecision := buildRealisticTask(b, n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0, cpuOK := processCPU()
	var total uint64
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		rep, err := Verify(ctx, db, task)
		if err != nil || !rep.OK() {
			b.Fatal(err, rep.Changes)
		}
		if rep.Deliveries == 0 || rep.Decisions < int(rep.Events)/100 {
			b.Fatalf("%d events, %d decisions, %d deliveries: want a decision and a delivery every 80 events", rep.Events, rep.Decisions, rep.Deliveries)
		}
		total = rep.Events
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	cpu1, _ := processCPU()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if cpuOK {
		b.ReportMetric(float64(total)*float64(b.N)/(cpu1-cpu0).Seconds(), "events/cpu-s")
	}
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(total)/float64(b.N), "B/event")
	b.ReportMetric(perEvent, "data-B/event")
	b.ReportMetric(perDecision, "B/decision")
	reportPercentiles(b, took)
}

// BenchmarkVerifyReadOnce is BenchmarkVerifyRealistic's task verified in turn, each way first every other round, reading the log
// once (the replay takes the events the chain check hands on, as Verify does with a bbolt
// store) and twice (the chain check and the replay side by side, each reading the log, as with
// a store without VerifyEvents): events per second of wall clock each, and the ratio of the two.
func BenchmarkVerifyReadOnce(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 200k-event task; skipped with -short")
	}
	ctx := context.Background()
	db, task, _, _ := buildRealisticTask(b, 200_000)
	ways := []ChainChecker{oneRead{db.(*store.DB)}, sideBySide{db}}
	var took [2]time.Duration
	var total uint64
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		for k := range ways {
			i := (k + n) % len(ways) // each goes first every other round
			start := time.Now()
			rep, err := Verify(ctx, ways[i], task)
			if err != nil || !rep.OK() {
				b.Fatal(err, rep.Changes)
			}
			took[i] += time.Since(start)
			total = rep.Events
		}
	}
	b.StopTimer()
	once := float64(total) * float64(b.N) / took[0].Seconds()
	twice := float64(total) * float64(b.N) / took[1].Seconds()
	b.ReportMetric(once, "once-events/s")
	b.ReportMetric(twice, "twice-events/s")
	b.ReportMetric(once/twice, "once/twice")
}

// BenchmarkVerifyCollector is BenchmarkVerifyRealistic's task verified in turn with the
// collector at Go's default (GOGC=100) and at VerifyGCPercent, each first every other round:
// events per second of wall clock and per CPU second for each, and the ratio of the two speeds.
// After the timed rounds, one verify more at each setting, watched, gives the peak of the heap
// above what was live before it.
func BenchmarkVerifyCollector(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 200k-event task; skipped with -short")
	}
	if VerifyGCPercent != 400 {
		b.Fatalf("the metrics' names say GOGC=400; VerifyGCPercent is %d", VerifyGCPercent)
	}
	ctx := context.Background()
	db, task, _, _ := buildRealisticTask(b, 200_000)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	settings := []int{100, VerifyGCPercent}
	var total uint64
	verify := func() {
		rep, err := Verify(ctx, db, task)
		if err != nil || !rep.OK() {
			b.Fatal(err, rep.Changes)
		}
		total = rep.Events
	}
	var took, cpu [2]time.Duration
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		for k := range settings {
			i := (k + n) % len(settings)
			debug.SetGCPercent(settings[i])
			cpu0, _ := processCPU()
			start := time.Now()
			verify()
			took[i] += time.Since(start)
			cpu1, _ := processCPU()
			cpu[i] += cpu1 - cpu0
		}
	}
	b.StopTimer()
	units := [2][3]string{
		{"gogc100-events/s", "gogc100-events/cpu-s", "gogc100-peak-heap-MB"},
		{"gogc400-events/s", "gogc400-events/cpu-s", "gogc400-peak-heap-MB"},
	}
	for i, pct := range settings {
		b.ReportMetric(float64(total)*float64(b.N)/took[i].Seconds(), units[i][0])
		if cpu[i] > 0 {
			b.ReportMetric(float64(total)*float64(b.N)/cpu[i].Seconds(), units[i][1])
		}
		debug.SetGCPercent(pct)
		b.ReportMetric(float64(peakHeap(verify))/(1<<20), units[i][2])
	}
	b.ReportMetric(took[0].Seconds()/took[1].Seconds(), "gogc400/gogc100")
}

// BenchmarkRealisticDecisionBytes measures what the decisions of BenchmarkVerifyRealistic's task
// hold, the bytes a verify decompresses, hashes, encodes again and compares and an import
// parses: their share of the log's data (data-%), how many are written in full rather than
// against the decision before (full-%), the mean size of each kind (B/full, B/delta), and the
// share of the decisions' bytes taken by the context (context-%; of it, the paths' evidence:
// sources-%), the rules' outcomes (outcomes-%; of them, the matches: matched-%, and the
// details: detail-%) and the rule files' diagnostics (diagnostics-%). one-session records the
// task in one session, as a running server does; session-per-hook opens the session again
// for every turn, as a 'replay hook' process does, whose first decision is written in full.
// Each task is built once; every round measures the same stored bytes. Skipped with -short or
// without the samples.
func BenchmarkRealisticDecisionBytes(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 200k-event task; skipped with -short")
	}
	const n = 200_000
	for _, reopen := range []bool{false, true} {
		name := "one-session"
		if reopen {
			name = "session-per-hook"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			db := openDB(b)
			task := recordRealisticTask(b, db, n, reopen)
			var s decisionBytes
			for b.Loop() {
				s = decisionBytes{}
				for ev, err := range db.Events(ctx, task, 1) {
					if err != nil {
						b.Fatal(err)
					}
					if err := s.add(ev); err != nil {
						b.Fatal(err)
					}
				}
			}
			s.report(b)
		})
	}
}

// decisionBytes adds up where the bytes of a log's decisions go, by the fields of their JSON.
type decisionBytes struct {
	events, allBytes, decisionBytes, fullBytes int
	full, delta                                int
	field                                      map[string]int // by top-level field
	sources, matched, detail                   int
}

// report reports what s added up as BenchmarkRealisticDecisionBytes's metrics.
func (s *decisionBytes) report(b *testing.B) {
	if s.full+s.delta == 0 {
		b.Fatal("the task holds no decision")
	}
	share := func(n int) float64 { return 100 * float64(n) / float64(s.decisionBytes) }
	b.ReportMetric(100*float64(s.decisionBytes)/float64(s.allBytes), "data-%")
	b.ReportMetric(100*float64(s.full)/float64(s.full+s.delta), "full-%")
	if s.full > 0 {
		b.ReportMetric(float64(s.fullBytes)/float64(s.full), "B/full")
	}
	if s.delta > 0 {
		b.ReportMetric(float64(s.decisionBytes-s.fullBytes)/float64(s.delta), "B/delta")
	}
	b.ReportMetric(float64(s.allBytes)/float64(s.events), "data-B/event")
	b.ReportMetric(share(s.field["context"]), "context-%")
	b.ReportMetric(share(s.sources), "sources-%")
	b.ReportMetric(share(s.field["included"]+s.field["excluded"]), "outcomes-%")
	b.ReportMetric(share(s.matched), "matched-%")
	b.ReportMetric(share(s.detail), "detail-%")
	b.ReportMetric(share(s.field["diagnostics"]), "diagnostics-%")
}

// add counts ev: every event's data, and a decision's fields.
func (s *decisionBytes) add(ev events.Event) error {
	s.events++
	s.allBytes += len(ev.Data)
	if ev.Type != events.TypeDecision {
		return nil
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return fmt.Errorf("%s: %w", ev, err)
	}
	s.decisionBytes += len(ev.Data)
	if _, ok := d["base"]; ok {
		s.delta++
	} else {
		s.full++
		s.fullBytes += len(ev.Data)
	}
	if s.field == nil {
		s.field = map[string]int{}
	}
	for k, v := range d {
		s.field[k] += len(v)
	}
	parts := func(key string) ([]map[string]json.RawMessage, error) {
		var list []map[string]json.RawMessage
		if len(d[key]) == 0 {
			return nil, nil
		}
		err := json.Unmarshal(d[key], &list)
		return list, err
	}
	ctx, err := parts("context")
	if err != nil {
		return fmt.Errorf("%s context: %w", ev, err)
	}
	for _, p := range ctx {
		s.sources += len(p["sources"])
	}
	for _, key := range []string{"included", "excluded"} {
		outs, err := parts(key)
		if err != nil {
			return fmt.Errorf("%s %s: %w", ev, key, err)
		}
		for _, o := range outs {
			s.matched += len(o["matched"])
			s.detail += len(o["detail"])
		}
	}
	return nil
}

// BenchmarkDiffRealistic is 'replay diff' of BenchmarkVerifyRealistic's task against its rules
// less one file, as when a user asks what deleting a rule would change: every decision is
// recomputed under those rules and compared outcome by outcome with the recorded one, read back
// without its context's evidence. It reports events per second by the wall clock. Skipped with -short or without the samples.
func BenchmarkDiffRealistic(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 200k-event task; skipped with -short")
	}
	ctx := context.Background()
	db, task, _, _ := buildRealisticTask(b, 200_000)
	ws := sampleRulesWorkspace(b)
	gone, err := filepath.Glob(filepath.Join(ws, ".clinerules", "*.md"))
	if err != nil || len(gone) == 0 {
		b.Fatalf("no Cline rule to leave out (%v)", err)
	}
	if err := os.Remove(gone[0]); err != nil {
		b.Fatal(err)
	}
	opts := ReplayOptions{Workspace: &rules.Workspace{Roots: []rules.Root{{Name: "/home/dev/shop", FS: os.DirFS(ws)}}}}
	var rep Report
	b.ResetTimer()
	for b.Loop() {
		if rep, err = Replay(ctx, db, task, opts); err != nil {
			b.Fatal(err)
		}
		if rep.Changed != rep.Decisions {
			b.Fatalf("%d of %d decisions changed without %s, want every one", rep.Changed, rep.Decisions, filepath.Base(gone[0]))
		}
	}
	b.ReportMetric(float64(rep.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
