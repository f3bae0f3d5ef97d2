package e2e

// The scenario of tasklog inside the real agents: replay install sets up the hooks, the agent
// runs the fake model's script (read src/api/routes.ts, write src/api/health.ts, edit it, run a
// shell command), and the test checks what the model was given and what the log holds.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events/agentlog"
)

// The rules' markers: unique text the test looks for in what the model was given.
const (
	scopedMarker = "API-RULE-7F3A"
	alwaysMarker = "ALWAYS-RULE-91C2"
)

// e2eRules is the scenario's rules for an agent: a rule scoped to src/api/** and an always rule,
// both in a tool family the agent does not load itself, so only tasklog can deliver them.
func e2eRules(agent string) map[string]string {
	scoped := "---\npaths: [\"src/api/**\"]\n---\n" + scopedMarker + ": handlers under src/api validate their input first.\n"
	always := alwaysMarker + ": keep every change small and say why in the summary.\n"
	if agent == "claude-code" || agent == "copilot-cli" { // Copilot CLI loads .claude/rules itself
		return map[string]string{".clinerules/api.md": scoped, ".clinerules/general.md": always}
	}
	return map[string]string{".claude/rules/api.md": scoped, ".claude/rules/general.md": always}
}

// ownMarker is the text of the root AGENTS.md an agent that reports its loads reads itself.
const ownMarker = "OWN-RULE-2D8E"

// checkOwnLoads asserts, for an agent that reports the instruction files it loads: the model got
// the root AGENTS.md once, from the agent (tasklog leaves it to the agent), and 'replay audit'
// says the agent reports its loads and had loaded AGENTS.md at every request.
func checkOwnLoads(t *testing.T, a *agentRun, replay, db string) {
	t.Helper()
	reqs := a.model.ModelRequests()
	if n := strings.Count(reqs[len(reqs)-1].Text(), ownMarker); n != 1 {
		t.Errorf("the last request holds the agent's own AGENTS.md %d times, want once", n)
	}
	out, _ := testenv.RunReplay(t, replay, a.home, "audit", "--json", "--db", db)
	var rep struct {
		AgentLoads string `json:"agent_loads"`
		auditJSON
	}
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&rep); err != nil || len(rep.Requests) == 0 {
		t.Fatalf("replay audit --json: %v\n%s", err, out)
	}
	if rep.AgentLoads != "reported" {
		t.Errorf("audit agent_loads %q, want reported", rep.AgentLoads)
	}
	rows := 0
	for _, r := range rep.Requests {
		for _, rule := range r.Rules {
			if rule.Rule != "AGENTS" {
				continue
			}
			rows++
			if rule.AgentLoaded == nil || !*rule.AgentLoaded || rule.Delivered {
				t.Errorf("prompt %d, request %d: AGENTS.md agent_loaded %v, delivered %v; want loaded by the agent, not delivered",
					r.Prompt, r.Request, fmtBoolPtr(rule.AgentLoaded), rule.Delivered)
			}
		}
	}
	if rows == 0 {
		t.Errorf("no audit row for AGENTS.md:\n%s", e2eTail(out, 3000))
	}
}

func fmtBoolPtr(b *bool) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprint(*b)
}

// e2ePrompt names no path, so the Read is the only evidence for the scoped rule.
const e2ePrompt = "Add a health check endpoint next to the existing routes."

// deliveredAs is the role of the message that carries a hook's text to the model (Claude Code
// 2.1.197 sent it in a user message, 2.1.332 in a system one).
var deliveredAs = map[string]string{"claude-code": "system", "codex": "developer", "cline": "user", "gemini": "user", "qwen": "tool", "copilot-cli": "user", "opencode": "tool"}

func TestAgentsEndToEnd(t *testing.T) {
	for _, d := range allDrivers {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel() // at most -parallel (GOMAXPROCS) agents at once
			a := newAgentRun(t, d)
			replay := testenv.ReplayBinary(t)
			db := filepath.Join(a.tmp, "t.db")
			a.write(t, e2eRead, "export const routes = ['/users'];\n")
			for rel, content := range e2eRules(d.name) {
				a.write(t, rel, content)
			}
			if d.memory != "" {
				a.write(t, d.memory, "Answer in English.\n")
			}
			if d.reportsLoads {
				a.write(t, "AGENTS.md", ownMarker+": the agent loads this file by itself.\n")
			}
			out, code := testenv.RunReplay(t, replay, a.home, "install", d.name, "--project", a.ws, "--db", db)
			if code != 0 {
				t.Fatalf("replay install %s: exit %d\n%s", d.name, code, out)
			}
			t.Logf("replay install %s:\n%s", d.name, out)
			// The hooks start a resident 'replay serve' for the database on their first call;
			// stopping it finishes what it accepted and frees the database. Its idle limit (set by
			// run) is a backstop should the test stop before.
			stopped := false
			stop := func() {
				if !stopped {
					stopped = true
					out, code := testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db)
					if code != 0 {
						t.Errorf("replay serve --stop: exit %d\n%s", code, out)
					}
					t.Logf("replay serve --stop: %s", out)
				}
			}
			t.Cleanup(stop)
			agentOut := a.run(t, e2ePrompt)
			stop()
			// The hooks fail open, so a fault shows only in their error log.
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(db), "tasklog-hook.log")); err == nil {
				t.Errorf("the hooks logged errors:\n%s", b)
			}
			checkModelSaw(t, a)
			checkLog(t, a, replay, db, agentOut)
			if d.reportsLoads {
				checkOwnLoads(t, a, replay, db)
			}
		})
	}
}

// checkModelSaw asserts from the fake model's requests: the scoped rule reaches the model in
// the first request after the Read, in a message of the role the agent gives hook text, and once:
// never before, and exactly once in every later request (it stays in the conversation and is
// not delivered again). The always rule reaches it once too.
func checkModelSaw(t *testing.T, a *agentRun) {
	t.Helper()
	reqs := a.model.ModelRequests()
	script := a.driver.script(a.ws)
	if got := lastStep(reqs); got != len(script)-1 {
		t.Fatalf("the agent stopped at step %d of %d\nrequests:\n%s", got, len(script)-1, a.describeRequests())
	}
	after := a.driver.readStep + 1
	first := firstRequestAtStep(reqs, after)
	if first == nil {
		t.Fatalf("no request after the read\nrequests:\n%s", a.describeRequests())
	}
	if p, ok := partWith(*first, scopedMarker); !ok {
		t.Errorf("the scoped rule is not in the first request after the read (request #%d)", first.Seq)
	} else if want := deliveredAs[a.driver.name]; p.Role != want {
		t.Errorf("the scoped rule reached the model in a %s %s part, want a %s message:\n%.400s", p.Role, p.Kind, want, p.Text)
	}
	for _, r := range reqs {
		n := strings.Count(r.Text(), scopedMarker)
		switch {
		case r.Step < after && n != 0:
			t.Errorf("request #%d (step %d, before the read's result) already holds the scoped rule", r.Seq, r.Step)
		case r.Step >= after && n != 1:
			t.Errorf("request #%d (step %d) holds the scoped rule %d times, want once", r.Seq, r.Step, n)
		}
	}
	last := reqs[len(reqs)-1]
	if n := strings.Count(last.Text(), alwaysMarker); n != 1 {
		t.Errorf("the last request holds the always rule %d times, want once", n)
	}
	if p, ok := partWith(last, alwaysMarker); ok && p.Role == "assistant" {
		t.Errorf("the always rule appears only in the model's own words")
	}
}

// partWith is the first part of r whose text holds s.
func partWith(r fakemodel.Request, s string) (fakemodel.Part, bool) {
	for _, p := range r.Parts {
		if strings.Contains(p.Text, s) {
			return p, true
		}
	}
	return fakemodel.Part{}, false
}

// logEvent is one event of 'replay log --json'.
type logEvent struct {
	Task string          `json:"task"`
	Seq  int             `json:"seq"`
	Turn int             `json:"turn"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// checkLog asserts from the log, through the built binary: one task, named after the agent's
// session; every prompt, tool call (with the model's call ids, each once) and write recorded;
// each rule delivered once, the scoped one after the Read; verify passes; explain at the turn of
// that delivery names the Read as the evidence and shows the delivery.
func checkLog(t *testing.T, a *agentRun, replay, db, agentOut string) {
	t.Helper()
	tasksOut, code := testenv.RunReplay(t, replay, a.home, "tasks", "--json", "--db", db)
	var tasks []struct {
		Task    string `json:"task"`
		Runtime string `json:"runtime"`
	}
	if err := json.Unmarshal([]byte(tasksOut), &tasks); code != 0 || err != nil || len(tasks) != 1 {
		t.Fatalf("replay tasks --json: exit %d, %v, want one task:\n%s", code, err, tasksOut)
	}
	id := tasks[0].Task
	if sid := a.driver.sessionID(agentOut); sid == "" {
		t.Errorf("no session id in the agent's output")
	} else if want := agentlog.TaskID(agentlog.Agent(a.driver.name), sid).String(); id != want {
		t.Errorf("task %s, want %s (the agent's session %s)", id, want, sid)
	}
	if tasks[0].Runtime != a.driver.name {
		t.Errorf("task runtime %q, want %q", tasks[0].Runtime, a.driver.name)
	}

	logOut, code := testenv.RunReplay(t, replay, a.home, "log", id, "--json", "--db", db)
	if code != 0 {
		t.Fatalf("replay log: exit %d\n%s", code, logOut)
	}
	evs := decodeLog(t, logOut)
	checkRecorded(t, a, evs)
	readSeq, api := checkDeliveries(t, a, evs)

	if out, code := testenv.RunReplay(t, replay, a.home, "verify", id, "--db", db); code != 0 || !strings.HasPrefix(out, "ok") {
		t.Errorf("replay verify: exit %d\n%s", code, out)
	}
	if readSeq == 0 || api.seq == 0 {
		return
	}
	checkExplain(t, a, replay, db, id, evs, readSeq, api)
}

func decodeLog(t *testing.T, out string) []logEvent {
	t.Helper()
	var evs []logEvent
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev logEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("replay log --json line %d: %v: %.200s", i+1, err, line)
		}
		if ev.Seq != i+1 {
			t.Fatalf("replay log --json line %d has seq %d", i+1, ev.Seq)
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 || evs[0].Type != "task_started" {
		t.Fatalf("the log does not begin with task_started:\n%s", e2eTail(out, 2000))
	}
	return evs
}

// checkRecorded asserts the prompt, every tool call the model made (by its call id, once each,
// in order) and the create and edit of the new file are in the log.
func checkRecorded(t *testing.T, a *agentRun, evs []logEvent) {
	t.Helper()
	var prompts []string
	var callIDs, tools, writes, loaded []string
	for _, ev := range evs {
		switch ev.Type {
		case "instructions_loaded":
			var d struct{ Path string }
			_ = json.Unmarshal(ev.Data, &d)
			loaded = append(loaded, d.Path)
		case "user_message":
			var d struct{ Text string }
			_ = json.Unmarshal(ev.Data, &d)
			prompts = append(prompts, d.Text)
		case "tool_call":
			var d struct{ ID, Tool string }
			_ = json.Unmarshal(ev.Data, &d)
			callIDs = append(callIDs, d.ID)
			tools = append(tools, d.Tool)
		case "file_write":
			var d struct{ Path, Op string }
			_ = json.Unmarshal(ev.Data, &d)
			if strings.HasSuffix(filepath.ToSlash(d.Path), e2eWrite) {
				writes = append(writes, d.Op)
			}
		}
	}
	if a.driver.promptHook && !slices.Equal(prompts, []string{e2ePrompt}) {
		t.Errorf("user messages %q, want the prompt once", prompts)
	}
	var want, wantTools []string
	for i, st := range a.driver.script(a.ws) {
		if st.Tool != "" {
			wantTools = append(wantTools, a.driver.loggedTool(st.Tool))
			if a.driver.callID != nil {
				want = append(want, a.driver.callID(i))
			}
		}
	}
	if a.driver.callID == nil {
		// No call id to compare with: the tools in order, each call once, under ids of its own.
		distinct := slices.Compact(slices.Sorted(slices.Values(callIDs)))
		if !slices.Equal(tools, wantTools) || len(distinct) != len(callIDs) || slices.Contains(callIDs, "") {
			t.Errorf("tool calls recorded as %q with ids %q, want %q each once under distinct ids", tools, callIDs, wantTools)
		}
	} else if !slices.Equal(callIDs, want) {
		t.Errorf("tool calls recorded with ids %q, want %q (each once, in order)", callIDs, want)
	}
	if !slices.Equal(writes, []string{"create", "edit"}) {
		t.Errorf("file writes of %s: %q, want create then edit", e2eWrite, writes)
	}
	if a.driver.memory != "" && !slices.Contains(loaded, filepath.Join(a.ws, a.driver.memory)) {
		t.Errorf("instructions_loaded %q, want the agent's own %s", loaded, a.driver.memory)
	}
}

// apiDelivery is the delivery of the scoped rule, as the log records it.
type apiDelivery struct {
	seq, decision int
	hook, channel string
}

// checkDeliveries asserts each rule was delivered once, the scoped rule by a decision after the
// Read, and returns the Read's seq (0 when missing) and the scoped rule's delivery.
func checkDeliveries(t *testing.T, a *agentRun, evs []logEvent) (readSeq int, api apiDelivery) {
	t.Helper()
	// The read is the call with the read step's id; without ids, the first call of its tool.
	readID, readTool := "", a.driver.loggedTool(a.driver.script(a.ws)[a.driver.readStep].Tool)
	if a.driver.callID != nil {
		readID = a.driver.callID(a.driver.readStep)
	}
	delivered := map[string][]int{} // rule name → delivery seqs
	for _, ev := range evs {
		switch ev.Type {
		case "tool_call":
			var d struct{ ID, Tool string }
			if json.Unmarshal(ev.Data, &d) == nil && readSeq == 0 &&
				((readID != "" && d.ID == readID) || (readID == "" && d.Tool == readTool)) {
				readSeq = ev.Seq
			}
		case "delivery":
			var d struct {
				Decision      int
				Hook, Channel string
				Rules         []struct{ Name string }
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Errorf("delivery at seq %d: %v", ev.Seq, err)
				continue
			}
			for _, r := range d.Rules {
				delivered[r.Name] = append(delivered[r.Name], ev.Seq)
				if r.Name == "api" {
					api = apiDelivery{seq: ev.Seq, decision: d.Decision, hook: d.Hook, channel: d.Channel}
				}
			}
		}
	}
	if len(delivered["api"]) != 1 || len(delivered["general"]) != 1 {
		t.Errorf("deliveries by rule (seqs): %v, want api and general once each", delivered)
	}
	if readSeq == 0 {
		t.Errorf("no tool_call of the read (id %q, tool %s)", readID, readTool)
	} else if api.decision <= readSeq {
		t.Errorf("the scoped rule was delivered by the decision at seq %d, not one after the read at seq %d", api.decision, readSeq)
	}
	return readSeq, api
}

// checkExplain asserts explain at the turn of the decision that delivered the scoped rule: its
// JSON names the Read as the evidence, and the rule's explanation shows the delivery.
func checkExplain(t *testing.T, a *agentRun, replay, db, id string, evs []logEvent, readSeq int, api apiDelivery) {
	t.Helper()
	turn := 0
	for _, ev := range evs {
		if ev.Seq == api.decision && ev.Type == "decision" {
			turn = ev.Turn
		}
	}
	if turn == 0 {
		t.Fatalf("the delivery of api names decision seq %d, which is not a decision", api.decision)
	}
	out, code := testenv.RunReplay(t, replay, a.home, "explain", id, "--turn", fmt.Sprint(turn), "--json", "--db", db)
	var ex struct {
		Included []struct {
			Name    string
			Matched []struct {
				Path    string
				Sources []struct {
					Kind string
					Seq  int
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &ex); code != 0 || err != nil {
		t.Fatalf("replay explain --turn %d --json: exit %d, %v\n%s", turn, code, err, out)
	}
	evidence := false
	for _, r := range ex.Included {
		for _, m := range r.Matched {
			for _, s := range m.Sources {
				evidence = evidence || (r.Name == "api" && m.Path == e2eRead && s.Seq == readSeq)
			}
		}
	}
	if !evidence {
		t.Errorf("explain --turn %d --json does not name the read (seq %d) as the evidence of api:\n%s", turn, readSeq, out)
	}
	text, code := testenv.RunReplay(t, replay, a.home, "explain", id, "--turn", fmt.Sprint(turn), "--rule", "api", "--db", db)
	lower := strings.ToLower(text)
	if code != 0 || !strings.Contains(lower, "deliver") || !strings.Contains(text, api.hook) ||
		!strings.Contains(text, fmt.Sprintf("seq %d", api.seq)) {
		t.Errorf("explain --turn %d --rule api does not show the delivery at seq %d (%s hook): exit %d\n%s",
			turn, api.seq, api.hook, code, text)
	} else {
		t.Logf("explain --turn %d --rule api:\n%s", turn, text)
	}
}
