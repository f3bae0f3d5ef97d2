// Command replay-hook is the fast path of 'replay hook': a small program that hands an agent's
// hook payload to the database's running server ('replay serve') and prints its reply. It
// takes the same arguments,
//
//	replay-hook AGENT [--db PATH] [--budget DURATION] [--otel-* flags]
//
// and links only part of the standard library (no encoding/json, no fmt: their code and
// initialisation cost page faults at every start) and the protocol's client
// (session/serve/wire), so it starts in a few milliseconds where the full replay binary takes
// tens. Whenever the fast path does not apply — no server listens (starting one is replay's
// job), the server did not answer a hook in the last minute (hookconf.ServerUnanswered),
// $TASKLOG_SERVE=off, an argument it does not know (--store among them) or
// $TASKLOG_STORE without --db, a payload that is not JSON, any error from the server or the
// connection — it runs 'replay hook' with the same arguments and payload, within the same
// budget, and prints what that prints: the behaviour is replay hook's in every case. The replay
// binary is the one beside this program, else the first on $PATH. It always exits 0.
package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/hookconf"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
	"github.com/tasklog/tasklog/internal/jsonlite"
	"github.com/tasklog/tasklog/session/serve/wire"
)

// What replay hook does too (hookconf).
const (
	hookBudget           = hookconf.Budget
	hookSessionEndBudget = hookconf.SessionEndBudget
	hookMaxPayload       = hookconf.MaxPayload
	hookLogName          = hookconf.LogName
	serveReserve         = hookconf.ServeReserve
	startEnv             = hookconf.StartEnv
	// killGrace is how long after the budget a replay hook that has not answered is killed;
	// waitGrace, how long after that its output may stay open (a SessionEnd hook of 2 s is
	// over 2.5 s in, within the 3 s Codex allows).
	killGrace = 300 * time.Millisecond
	waitGrace = 200 * time.Millisecond
)

// agents are the dialects replay hook takes, and ordered their specs in detection order.
var (
	agents  = specNames(specs)
	ordered = hookspec.Ordered(specs)
)

func specNames(specs []hookspec.Spec) []string {
	out := make([]string, len(specs))
	for i := range specs {
		out[i] = specs[i].Agent
	}
	return out
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// call is one run's arguments.
type call struct {
	args   []string // as given, for replay hook
	agent  string
	db     string
	budget time.Duration
	start  time.Time
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &call{args: args, start: time.Now(), budget: hookBudget}
	usual := c.parse()
	payload, err := io.ReadAll(io.LimitReader(stdin, hookMaxPayload))
	if err != nil || !usual || os.Getenv("TASKLOG_SERVE") == "off" {
		return c.fallback(payload, false, false, stdout, stderr)
	}
	if c.db == "" {
		c.db = wire.DefaultDB()
	}
	if hookconf.ServerUnanswered(c.db) {
		// The server did not answer a hook a moment ago: replay hook goes to the database.
		return c.fallback(payload, true, false, stdout, stderr)
	}
	ctx, cancel := context.WithDeadline(context.Background(), c.start.Add(c.budgetFor(payload)-c.budget/serveReserve))
	defer cancel()
	reply, err := wire.Hook(ctx, wire.SocketPath(c.db), "replay-hook", c.agent, payload)
	if err != nil {
		if hookconf.ServerTimedOut(err) {
			hookconf.MarkServerUnanswered(c.db)
		}
		reached := serverRecordedNothing(err)
		return c.fallback(payload, reached, reached, stdout, stderr)
	}
	io.WriteString(stdout, reply)
	return 0
}

// budgetFor is the payload's budget: --budget, at most hookSessionEndBudget for an event that
// ends a session.
func (c *call) budgetFor(payload []byte) time.Duration {
	if endsSession(payload) && c.budget > hookSessionEndBudget {
		return hookSessionEndBudget
	}
	return c.budget
}

// parse reads the arguments replay hook takes; false for anything else (help, an unknown flag
// or agent), which replay hook then answers.
func (c *call) parse() bool {
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case strings.HasPrefix(a, "-") && name == "otel-log-user-prompts":
			// For the server replay hook starts; a running server keeps its own.
		case strings.HasPrefix(a, "-") && (name == "otel-endpoint" || name == "otel-protocol" || name == "otel-service-name"):
			if !hasVal {
				if i+1 >= len(c.args) {
					return false
				}
				i++
			}
		case strings.HasPrefix(a, "-") && (name == "db" || name == "budget"):
			if !hasVal {
				if i+1 >= len(c.args) {
					return false
				}
				i++
				val = c.args[i]
			}
			if name == "db" {
				c.db = val
			} else if d, err := time.ParseDuration(val); err == nil && d > 0 {
				c.budget = d
			} else {
				return false
			}
		case strings.HasPrefix(a, "-"):
			return false
		case c.agent == "":
			c.agent = a
		default:
			return false
		}
	}
	if c.db == "" && os.Getenv("TASKLOG_STORE") != "" {
		// $TASKLOG_STORE may name a NATS store: replay hook knows where its server is.
		return false
	}
	for _, a := range agents {
		if a == c.agent {
			return true
		}
	}
	return false
}

// sessionEnds are the events that end a session in some dialect; replay hook gives them the
// shorter budget (Codex allows its SessionEnd hook 3 s).
var sessionEnds = func() []string {
	var out []string
	for i := range specs {
		for _, e := range specs[i].SessionEnds {
			if !contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}()

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// event is the payload's event name, whatever the dialect calls the field.
func event(payload []byte) string {
	v, _ := jsonlite.Parse(payload)
	fields, _ := v.(map[string]any)
	name := ""
	for _, k := range []string{"hook_event_name", "hookEventName", "hookName"} {
		s, _ := fields[k].(string)
		name += s
	}
	return name
}

// endsSession tells whether the payload's event ends a session. Most payloads name none of
// those events anywhere, and are not decoded.
func endsSession(payload []byte) bool {
	named := false
	for _, s := range sessionEnds {
		named = named || bytes.Contains(payload, []byte(s))
	}
	if !named {
		return false
	}
	e := event(payload)
	for _, s := range sessionEnds {
		if e == s {
			return true
		}
	}
	return false
}

// serverRecordedNothing tells whether the server was reached but did not take the payload
// (the request timed out, the connection broke, the database was locked or failed, the log
// changed under it, the server was at a bound): replay hook then opens the database at once
// rather than ask the server again, as it does after the same answer. For anything else (no
// server, one shutting down, a refused payload) replay hook goes to the server itself.
func serverRecordedNothing(err error) bool {
	var e *wire.Error
	if errors.As(err, &e) {
		switch e.Code {
		case "timeout", "internal", "conflict", "locked", "busy":
			return true
		}
		return false
	}
	return !wire.NothingListens(err) && !errors.Is(err, wire.ErrNotJSON) && !errors.Is(err, wire.ErrUntrustedSocket)
}

// fallback runs replay hook with the arguments, the payload on its stdin and the time this
// program started, and prints its reply; $TASKLOG_SERVE=off when serverOff, and
// $TASKLOG_HOOK_AGAIN=1 when again (the server was reached but did not answer: it may have
// recorded the delivery). When replay cannot be run, or does not exit 0 (killed killGrace after
// the budget at the latest), the reply is neutral and the error is logged.
func (c *call) fallback(payload []byte, serverOff, again bool, stdout, stderr io.Writer) int {
	exe, err := replayExecutable()
	if err != nil {
		return c.neutral(payload, err, stdout, stderr)
	}
	ctx, cancel := context.WithDeadline(context.Background(), c.start.Add(c.budgetFor(payload)+killGrace))
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, append([]string{"hook"}, c.args...)...)
	cmd.Env = append(os.Environ(), startEnv+"="+strconv.FormatInt(c.start.UnixNano(), 10))
	if serverOff {
		cmd.Env = append(cmd.Env, "TASKLOG_SERVE=off")
	}
	if again {
		cmd.Env = append(cmd.Env, hookconf.AgainEnv+"=1")
	}
	// A process replay hook left behind holding its output (it starts its server detached, on
	// the null device) does not hold this one up.
	cmd.WaitDelay = waitGrace
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(payload), &out, stderr
	if err := cmd.Run(); err != nil {
		// replay hook exits 0 whenever it ends by itself: this one failed to start, crashed or
		// was killed at the deadline, and what it printed may be cut off.
		return c.neutral(payload, errors.New(exe+" hook: "+err.Error()), stdout, stderr)
	}
	stdout.Write(out.Bytes())
	return 0
}

// replayExecutable is the replay binary beside this program, else the first on $PATH.
func replayExecutable() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "replay")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath("replay")
	if err != nil {
		return "", errors.New("no replay binary beside replay-hook or on $PATH: " + err.Error())
	}
	return p, nil
}

// neutral prints the neutral reply of the agent's dialect and logs err beside the database,
// as replay hook does for its own faults.
func (c *call) neutral(payload []byte, err error, stdout, stderr io.Writer) int {
	line := time.Now().UTC().Format(time.RFC3339Nano) + " replay-hook " + c.agent + " " + event(payload) + ": " + err.Error() + "\n"
	io.WriteString(stderr, line)
	db := c.db
	if db == "" {
		db = wire.DefaultDB()
	}
	hookconf.AppendLog(db, line)
	stdout.Write(neutralReply(c.agent, payload))
	return 0
}

// neutralReply is what agentlog.NeutralReply answers for the payload's dialect and event:
// replay-hook falls back on it only when replay itself cannot be run. The dialect is told as
// agentlog tells it, from the same specs (hookspec.Detect), else it is the agent named on the
// command line.
func neutralReply(agent string, payload []byte) []byte {
	parsed, err := jsonlite.Parse(payload)
	if v, ok := parsed.(map[string]any); err == nil && ok {
		agent = hookspec.Detect(ordered, agent, v)
	}
	if s := hookspec.Find(specs, agent); s != nil {
		return s.NeutralReply(event(payload))
	}
	return nil
}
