package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/hookconf"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/session/otelexport"
	"github.com/tasklog/tasklog/session/serve/wire"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/location"
)

// hookStdin is where 'replay hook' reads its payload; tests replace it.
var hookStdin io.Reader = os.Stdin

// What replay-hook agrees on with 'replay hook' (hookconf).
const (
	hookBudget           = hookconf.Budget
	hookSessionEndBudget = hookconf.SessionEndBudget
	hookMaxPayload       = hookconf.MaxPayload
	hookLogName          = hookconf.LogName
	hookStartEnv         = hookconf.StartEnv
	hookAgainEnv         = hookconf.AgainEnv
)

// cmdHook is 'replay hook AGENT [--db PATH] [--budget D]': one hook payload on stdin, the
// dialect's reply on stdout, exit status 0 whatever happens. Faults go to the error log and the
// reply is neutral.
func cmdHook(args []string, stdout, stderr io.Writer) int {
	hc, err := parseHookArgs(args, stderr)
	if errors.Is(err, errHelp) {
		return exitOK
	}
	payload, rerr := io.ReadAll(io.LimitReader(hookStdin, hookMaxPayload))
	if err == nil {
		err = rerr
	}
	if err != nil {
		agent, event := hc.hint, ""
		if h, perr := agentlog.ParseHook(hc.hint, payload); perr == nil {
			agent, event = h.Agent, h.Event // the log line says whose hook it was
		}
		hc.logFaults(stderr, agent, event, err)
		stdout.Write(agentlog.NeutralReply(agent, event))
		return exitOK
	}
	reply := hc.run(payload, stderr)
	stdout.Write(reply)
	return exitOK
}

var errHelp = errors.New("help")

// hookAgentNames lists the agents 'replay hook' reads, for its usage.
func hookAgentNames() string {
	var names []string
	for _, a := range agentlog.HookAgents() {
		names = append(names, string(a))
	}
	return strings.Join(names, ", ")
}

// hookConfig is a hook run's arguments.
type hookConfig struct {
	hint agentlog.Agent
	// loc is the store; db the path its hook log, spool and server socket go beside
	// (loc.SideFile(): the file itself, or a NATS store's folder in the user's data folder).
	loc    location.Location
	db     string
	budget time.Duration
	start  time.Time
	// again: a server may have recorded this payload's delivery without the reply reaching
	// the agent ($TASKLOG_HOOK_AGAIN, or the server was reached and did not answer); the hook
	// then prints that delivery again (session.AgentSession.HookAgain).
	again bool
	// otel is the OpenTelemetry export of a server this hook starts (its --otel-* flags; the
	// OTEL_* variables reach that server with the hook's environment). A hook never exports.
	otel otelexport.Config
	// otelArgs are the --otel-* flags as given, for the server this hook starts.
	otelArgs []string
	// flagErr is a flag whose value was wrong but which does not say where to record (--budget,
	// --otel-*): the payload is recorded with that flag's default, and the error logged.
	flagErr error
}

// hookValueFlags are the flags of replay hook that take a value; --otel-log-user-prompts is
// its one boolean flag.
var hookValueFlags = []string{"db", "store", "budget", "otel-endpoint", "otel-protocol", "otel-service-name"}

const hookPromptsFlag = "otel-log-user-prompts"

func parseHookArgs(args []string, stderr io.Writer) (*hookConfig, error) {
	hc := &hookConfig{start: time.Now(), budget: hookBudget, db: defaultHookDB(), again: os.Getenv(hookAgainEnv) == "1"}
	var agent, storeVal string
	dbSet, storeSet := false, false
	var otelErr error // the first wrong --otel-* value
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "-h" || a == "--help" || a == "-help":
			fmt.Fprintln(stderr, "usage: replay hook AGENT [--db PATH | --store nats://HOST:PORT[/STREAM]] [--budget DURATION]\n"+
				"                   [--otel-endpoint URL] [--otel-protocol P] [--otel-service-name NAME] [--otel-log-user-prompts]\n\n"+
				"Reads one hook payload of AGENT ("+hookAgentNames()+") on stdin,\n"+
				"records it, delivers the rules the agent misses and prints the agent's reply. It always\n"+
				"exits 0; faults are appended to "+hookLogName+" beside the database, or in $TMPDIR/tasklog-<uid>/\n"+
				"(owner-only) when that folder cannot be written.\n\n"+
				"flags:\n"+
				"  --db PATH       the database to record to (default "+defaultHookDB()+": $TASKLOG_DB, else\n"+
				"                  tasklog/tasklog.db in the user's data folder)\n"+
				"  --store URL     a NATS store instead of --db (default: $"+location.Env+")\n"+
				"  --budget D      how long the hook may take before it gives the neutral reply (default "+hookBudget.String()+")\n"+
				"  --otel-*        replay serve's: a hook never exports itself; the server it starts\n"+
				"                  exports with these flags and the hook's OTEL_* variables")
			return hc, errHelp
		case strings.HasPrefix(a, "-") && name == hookPromptsFlag:
			on, err := strconv.ParseBool(cmp.Or(val, "true"))
			if hasVal && err != nil {
				otelErr = cmp.Or(otelErr, fmt.Errorf("--%s=%q is not true or false", name, val))
				continue
			}
			hc.otel.UserPrompts = on
			hc.otelArgs = append(hc.otelArgs, "--"+name+"="+strconv.FormatBool(on))
		case strings.HasPrefix(a, "-") && slices.Contains(hookValueFlags, name):
			if !hasVal {
				if i+1 >= len(args) {
					return hc, fmt.Errorf("replay hook: flag --%s needs a value", name)
				}
				i++
				val = args[i]
			}
			switch name {
			case "db":
				hc.db, dbSet = val, true
			case "store":
				storeVal, storeSet = val, true
			case "budget":
				d, err := time.ParseDuration(val)
				if err != nil || d <= 0 {
					hc.flagErr = fmt.Errorf("replay hook: --budget %q is not a positive duration; the payload is recorded within the default budget, %v", val, hookBudget)
					continue
				}
				hc.budget = d
			default:
				switch name {
				case "otel-endpoint":
					hc.otel.Endpoint = val
				case "otel-protocol":
					hc.otel.Protocol = val
				case "otel-service-name":
					hc.otel.ServiceName = val
				}
				hc.otelArgs = append(hc.otelArgs, "--"+name, val)
			}
		case strings.HasPrefix(a, "-"):
			if s := closestFlag(name, append(slices.Clone(hookValueFlags), hookPromptsFlag)); s != "" {
				return hc, fmt.Errorf("replay hook: unknown flag %s (did you mean --%s?)", a, s)
			}
			return hc, fmt.Errorf("replay hook: unknown flag %s", a)
		case agent == "":
			agent = a
		default:
			return hc, fmt.Errorf("replay hook: unexpected argument %q", a)
		}
	}
	if err := hc.otel.Check(); len(hc.otelArgs) > 0 && err != nil {
		otelErr = cmp.Or(otelErr, err)
	}
	if otelErr != nil {
		// A server this hook starts would refuse the flags: it starts without them.
		hc.otel, hc.otelArgs = otelexport.Config{}, nil
		err := fmt.Errorf("replay hook: %w; the payload is recorded, and a server this hook starts runs without the --otel-* flags (the OTEL_* variables still apply)", otelErr)
		if hc.flagErr != nil {
			err = fmt.Errorf("%w; %w", hc.flagErr, err) // one line of the hook log
		}
		hc.flagErr = err
	}
	loc, err := location.Select(hc.db, dbSet, storeVal, storeSet, true)
	if err != nil {
		return hc, fmt.Errorf("replay hook: %w", err)
	}
	hc.loc, hc.db = loc, loc.SideFile()
	hc.start = hookStart(hc.start, hc.budget)
	ag, err := agentlog.ParseHookAgent(agent)
	if err != nil {
		return hc, fmt.Errorf("replay hook: %w", err)
	}
	hc.hint = ag
	return hc, nil
}

// hookStart is when the hook's budget began: $TASKLOG_HOOK_START when it is a time within the
// budget before now, else now.
func hookStart(now time.Time, budget time.Duration) time.Time {
	ns, err := strconv.ParseInt(os.Getenv(hookStartEnv), 10, 64)
	if err != nil {
		return now
	}
	if t := time.Unix(0, ns); !t.After(now) && now.Sub(t) < budget {
		return t
	}
	return now
}

// defaultHookDB is the database of hooks (wire.DefaultDB).
func defaultHookDB() string { return wire.DefaultDB() }

// neutralFor is the neutral reply of the dialect the payload shows (the hint when it shows
// none); nothing when neither is known.
func neutralFor(hint agentlog.Agent, payload []byte) []byte {
	if h, err := agentlog.ParseHook(hint, payload); err == nil {
		return agentlog.NeutralReply(h.Agent, h.Event)
	}
	return agentlog.NeutralReply(hint, "")
}

// run handles one payload and returns the reply. A panic is a fault like any other.
func (hc *hookConfig) run(payload []byte, stderr io.Writer) (reply []byte) {
	var h *agentlog.Hook
	defer func() {
		if r := recover(); r != nil {
			event := ""
			if h != nil {
				event = h.Event
			}
			hc.logError(stderr, hc.hint, event, fmt.Errorf("panic: %v", r))
			reply = neutralFor(hc.hint, payload)
		}
	}()
	h, err := agentlog.ParseHook(hc.hint, payload)
	if err != nil {
		hc.logFaults(stderr, hc.hint, "", err)
		return agentlog.NeutralReply(hc.hint, "")
	}
	hc.logFaults(stderr, h.Agent, h.Event, nil)
	defer hc.warnMissingRoots(h)
	budget := hc.budget
	if h.Kind == agentlog.HookSessionEnd && budget > hookSessionEndBudget {
		budget = hookSessionEndBudget
	}
	ctx, cancel := context.WithDeadline(context.Background(), hc.start.Add(budget))
	defer cancel()
	if reply, ok := hc.viaServer(ctx, h, payload, stderr); ok {
		return reply
	}
	text, err := hc.handle(ctx, h, payload)
	hc.noteNotExported(h)
	if err != nil && hc.again && errors.Is(err, store.ErrLocked) {
		// The payload is spooled; a server that took over the database may hold its delivery.
		if reply, ok := hc.againViaServer(ctx, payload); ok {
			return reply
		}
	}
	if err != nil {
		hc.logError(stderr, h.Agent, h.Event, err)
		return agentlog.NeutralReply(h.Agent, h.Event)
	}
	return h.Reply(text)
}

// handle opens the database within the budget, records the payload's events, decides and
// delivers when the event can reach the model, then records what earlier hooks spooled with
// what is left of the budget, and returns the text to reply with. A payload it could not record
// (the lock was not had in time, the deadline passed, the log changed under it) is spooled for
// the next hook.
func (hc *hookConfig) handle(ctx context.Context, h *agentlog.Hook, payload []byte) (string, error) {
	db, err := hc.openDB(ctx)
	if errors.Is(err, store.ErrLocked) || diskRefused(err) || (err != nil && hc.loc.Shared()) {
		// Another process holds the file, its disk refuses the write, or the NATS server is
		// out of reach: the next hook that gets the store records the payload.
		return "", hc.spoolPayload(h, payload, err)
	}
	if err != nil {
		return "", err
	}
	defer db.Close()
	text, err := recordAndDeliver(ctx, db, h, nil, hc.again)
	if err != nil {
		return "", hc.spoolPayload(h, payload, err)
	}
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > hc.budget/spoolDrainMinShare {
		if err := drainSpool(ctx, db, hc.db); err != nil {
			hc.logError(io.Discard, h.Agent, h.Event, fmt.Errorf("drain spool: %w", err))
		}
	}
	return text, nil
}

// diskRefused tells whether err is a disk refusing a write: full, over quota, read-only, or
// failing.
func diskRefused(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EFBIG, syscall.EIO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// spoolDrainMinShare: a hook drains the spool only while more than budget/spoolDrainMinShare
// is left after its own payload.
const spoolDrainMinShare = 10

// spoolPayload spools a payload that could not be recorded, and returns why, saying whether it
// was spooled.
func (hc *hookConfig) spoolPayload(h *agentlog.Hook, payload []byte, cause error) error {
	if serr := spool(hc.db, h.Agent, payload, time.Now()); serr != nil {
		return fmt.Errorf("%w; spooling the payload failed too: %v", cause, serr)
	}
	return fmt.Errorf("%w; the payload was spooled for the next hook to record", cause)
}

// skipLockWait is how long a hook waits for another process's lock on the database while the
// server is left alone (hookconf.ServerUnanswered): a hung server may hold it.
const skipLockWait = 250 * time.Millisecond

// openDB opens the database, creating its folder, waiting for another process's lock until
// shortly before the budget ends (skipLockWait at most while the server is left alone).
func (hc *hookConfig) openDB(ctx context.Context) (store.Store, error) {
	wait := time.Second
	if dl, ok := ctx.Deadline(); ok {
		// Leave time to record, decide and reply after the lock is had.
		wait = time.Until(dl) - hc.budget/5
	}
	if hookconf.ServerUnanswered(hc.db) {
		// A server that hangs may hold the file: waiting for it is the wait this hook skips.
		wait = min(wait, skipLockWait)
	}
	if wait <= 0 {
		wait = time.Millisecond
	}
	return hc.loc.Open(location.Options{Wait: wait, CallTimeout: wait, MakeDir: true})
}

// recordAndDeliver records the hook's events in its task and, when the event's reply reaches
// the model and it brought something new (or follows a compaction), decides and delivers. now,
// when set, stamps the events (a spooled payload keeps the time it arrived, and delivers
// nothing). again: the payload's delivery may be in the log unprinted; it is printed again.
func recordAndDeliver(ctx context.Context, db store.Store, h *agentlog.Hook, now func() time.Time, again bool) (string, error) {
	var home fs.FS
	if dir, err := os.UserHomeDir(); err == nil {
		home = os.DirFS(dir)
	}
	a, err := session.OpenAgent(ctx, db, h.TaskID(), session.AgentOptions{Agent: h.Agent,
		Started: h.Started(hostOrigin()), Home: home, Now: now})
	if err != nil {
		return "", err
	}
	defer a.Close()
	if again && now == nil {
		return a.HookAgain(ctx, h)
	}
	return a.Hook(ctx, h, now == nil)
}

// warnMissingRoots notes in the error log, and only there, each workspace root of the payload
// that is not a folder on this machine. The hook records such a task all the same (what the
// agent did is never dropped, and a hook must not fail the agent), but no rule file can be read
// for it and 'replay tasks' run elsewhere does not list it: the log says why.
func (hc *hookConfig) warnMissingRoots(h *agentlog.Hook) {
	for _, root := range h.Roots {
		if !filepath.IsAbs(root) {
			continue
		}
		if st, err := os.Stat(root); err == nil && st.IsDir() {
			continue
		}
		hc.logError(io.Discard, h.Agent, h.Event, fmt.Errorf("warning: the workspace root %s is not a folder on this machine: "+
			"the task is recorded, but no rule file is read for it, and 'replay tasks' lists it only in that folder or with --all", root))
	}
}

// logFaults logs the wrong flag value the payload was recorded despite (flagErr), once, then
// err when there is one.
func (hc *hookConfig) logFaults(stderr io.Writer, agent agentlog.Agent, event string, err error) {
	if hc.flagErr != nil {
		hc.logError(stderr, agent, event, hc.flagErr)
		hc.flagErr = nil
	}
	if err != nil {
		hc.logError(stderr, agent, event, err)
	}
}

// logError appends one line to the error log beside the database (the temporary folder's when
// that cannot be written) and to stderr, which the agents show only in their debug output.
func (hc *hookConfig) logError(stderr io.Writer, agent agentlog.Agent, event string, err error) {
	line := fmt.Sprintf("%s replay hook %s %s: %v\n", time.Now().UTC().Format(time.RFC3339Nano), agent, event, err)
	fmt.Fprint(stderr, line)
	hookconf.AppendLog(hc.db, line)
}
