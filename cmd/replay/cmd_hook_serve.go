package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/hookconf"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/session/serve/wire"
	"github.com/tasklog/tasklog/store/location"
)

// Reaching the server from a hook: the share of its budget a hook waits for a server it started
// to listen, at most (2 s of the usual 5 s: a slower machine is given a longer --budget), and
// the share it keeps for opening the database itself when the server does not answer in time.
const (
	serveStartShare = 5                     // budget*2/serveStartShare
	serveReserve    = hookconf.ServeReserve // budget/serveReserve is kept for the fallback
)

// viaServer hands the payload to the database's server ('replay serve') as replay-hook does
// (wire.Hook: the hello and the hook in one write), starting the server (detached) when none
// listens, unless one did not come up in the last minute. ok is false when the server could not
// take the payload in time (none could be started, it is shutting down, the connection broke,
// or it answered with an error that leaves the payload unrecorded: timeout, internal,
// conflict): the caller then opens the database itself, within what is left of ctx. A payload the server refused (not a hook of the
// agent) gets the neutral reply, the error logged.
//
// A server that did not answer a hook in time is left alone for hookconf.ServerSkip: the hooks
// of that while go to the database at once. A server that was reached but did not answer may
// have recorded the delivery: hc.again is set. $TASKLOG_SERVE=off skips the server;
// $TASKLOG_SERVE_IDLE sets the idle period of a server a hook starts. Test binaries never
// start one (their executable is not replay).
func (hc *hookConfig) viaServer(ctx context.Context, h *agentlog.Hook, payload []byte, stderr io.Writer) (reply []byte, ok bool) {
	if os.Getenv("TASKLOG_SERVE") == "off" || hookconf.ServerUnanswered(hc.db) {
		// Off, or it did not answer a hook a moment ago: not worth this hook's wait.
		return nil, false
	}
	dl, _ := ctx.Deadline()
	reserve := hc.budget / serveReserve
	callCtx, cancel := context.WithDeadline(ctx, dl.Add(-reserve))
	defer cancel()
	sock := serve.SocketPath(hc.db)
	res, err := wire.Hook(callCtx, sock, "replay hook", string(hc.hint), payload)
	if serverStarter != nil && wire.NothingListens(err) && !startFailedRecently(hc.db) {
		if serr := serverStarter(hc.loc.String(), hc.otelArgs); serr != nil {
			markStartFailed(hc.db)
			hc.logError(io.Discard, h.Agent, h.Event, fmt.Errorf("start replay serve: %w", serr))
			return nil, false
		}
		if res, err = hookStarted(callCtx, hc.budget*2/serveStartShare, sock, string(hc.hint), payload); wire.NothingListens(err) {
			markStartFailed(hc.db)
			hc.logError(io.Discard, h.Agent, h.Event, fmt.Errorf("replay serve did not come up: %w", err))
		}
	}
	var we *wire.Error
	if err != nil && mayHaveRecorded(err) {
		hc.again = true
	}
	if err != nil && hookconf.ServerTimedOut(err) {
		hookconf.MarkServerUnanswered(hc.db)
	}
	switch {
	case err == nil:
		return []byte(res), true
	case !errors.As(err, &we) || we.Code == serve.CodeShuttingDown:
		return nil, false // no server could take it
	case serverRecordedNothing(err):
		hc.logError(io.Discard, h.Agent, h.Event, fmt.Errorf("replay serve (opening the database instead): %w", err))
		return nil, false
	}
	hc.logError(stderr, h.Agent, h.Event, fmt.Errorf("replay serve: %w", err))
	return agentlog.NeutralReply(h.Agent, h.Event), true
}

// serverStarter starts a server for a database, with more flags of replay serve (the hook's
// --otel-* flags); nil in test binaries, whose executable is not replay (tests set it).
var serverStarter = func() func(db string, flags []string) error {
	if testing.Testing() {
		return nil
	}
	return startServer
}()

// serveStartRetry is how long hooks do not start a server after one did not come up: they go
// to the database at once instead of waiting for it again.
const serveStartRetry = 60 * time.Second

// startFailedMarker is the file beside the database whose modification time says when a
// started server last did not come up.
func startFailedMarker(db string) string { return db + ".serve-failed" }

func startFailedRecently(db string) bool {
	fi, err := os.Stat(startFailedMarker(db))
	if err != nil {
		return false
	}
	ago := time.Since(fi.ModTime())
	return ago > -serveStartRetry && ago < serveStartRetry
}

func markStartFailed(db string) {
	p := startFailedMarker(db)
	if os.MkdirAll(filepath.Dir(p), 0o755) == nil && os.WriteFile(p, nil, 0o644) == nil {
		now := time.Now()
		os.Chtimes(p, now, now)
	}
}

// serverRecordedNothing tells whether the server's error means the payload may not have been
// recorded although it could be (the request timed out, the log changed under it, the database
// was locked or failed, the server was at a bound): the hook then goes to the database itself,
// as when no server answers. Recording again is safe: every event has its idempotency key.
func serverRecordedNothing(err error) bool {
	var e *wire.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case serve.CodeTimeout, serve.CodeInternal, serve.CodeConflict, serve.CodeBusy, "locked":
		return true
	}
	return false
}

// againViaServer hands a payload handled again (hc.again) to the database's server, when the
// database is held by another process (a server started after the one that died), with what
// is left of ctx: the server prints the delivery the log holds again, as the hook would have.
// Not when the server is left alone (hookconf.ServerUnanswered).
func (hc *hookConfig) againViaServer(ctx context.Context, payload []byte) ([]byte, bool) {
	if hookconf.ServerUnanswered(hc.db) {
		return nil, false
	}
	res, err := wire.HookAgain(ctx, serve.SocketPath(hc.db), "replay hook", string(hc.hint), payload)
	if err != nil {
		if hookconf.ServerTimedOut(err) {
			hookconf.MarkServerUnanswered(hc.db)
		}
		return nil, false
	}
	return []byte(res), true
}

// mayHaveRecorded tells whether a server that answered the hook with err may have recorded
// its delivery all the same: it was reached and did not say it refused the payload (the
// connection broke, the deadline passed, it failed).
func mayHaveRecorded(err error) bool {
	var we *wire.Error
	if errors.As(err, &we) {
		return serverRecordedNothing(err)
	}
	return !wire.NothingListens(err) && !errors.Is(err, wire.ErrNotJSON) && !errors.Is(err, wire.ErrUntrustedSocket)
}

// hookStarted hands the payload to a server just started, trying again while it does not
// listen yet, for wait at most. A try that fails because the wait is over (the pause and the
// wait may end together) counts as nothing listening.
func hookStarted(ctx context.Context, wait time.Duration, sock, agent string, payload []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	dl, _ := ctx.Deadline()
	pause := time.Millisecond
	var nothing error // the last try's: nothing listens
	for {
		reply, err := wire.Hook(ctx, sock, "replay hook", agent, payload)
		if err != nil && nothing != nil && !time.Now().Before(dl) && !errors.As(err, new(*wire.Error)) {
			return "", nothing
		}
		if !wire.NothingListens(err) {
			return reply, err
		}
		nothing = err
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(pause):
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// startServer starts 'replay serve --db DB' ('--store URL' for a NATS store) in a session of its
// own, detached from the hook's stdio (the agent reads the hook's stdout until every writer
// closed it) and left running when the hook exits. Of several started at once, one gets the
// database's server lock; the others exit. The server has the hook's environment (the OTEL_*
// variables of its export among it) and takes flags too (the hook's --otel-* flags).
func startServer(db string, flags []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"serve", location.FlagFor(db), db}
	if idle := os.Getenv("TASKLOG_SERVE_IDLE"); idle != "" {
		args = append(args, "--idle", idle)
	}
	args = append(args, flags...)
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Stdin, Stdout and Stderr left nil are the null device.
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// noteNotExported notes once in the error log of a database that a hook with OpenTelemetry
// export configured recorded its payload itself, without a server: a hook never exports (an
// exporter must not slow it), so what it records reaches a collector only through 'replay otel
// export'. The marker file beside the database says it was noted.
func (hc *hookConfig) noteNotExported(h *agentlog.Hook) {
	if !hc.otel.Enabled() {
		return
	}
	f, err := os.OpenFile(hc.db+".otel-noted", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return // noted before, or the folder cannot be written (nor then the log)
	}
	f.Close()
	hc.logError(io.Discard, h.Agent, h.Event, errors.New("note: OpenTelemetry export is configured, but this hook recorded its payload without replay serve "+
		"($TASKLOG_SERVE=off, or no server took it): a hook never exports itself, so what hooks record this way is sent only by 'replay otel export' (noted once)"))
}
