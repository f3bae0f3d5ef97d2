package main

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events/agentlog"
)

// BenchmarkNATSHookInProcess is BenchmarkHookInProcess on a NATS store: the same 10,000-event
// task, imported into a stream of an in-process server on 127.0.0.1 that syncs every write;
// each hook connects, opens the stream, reopens the task, records, decides and delivers.
// first-ms is the first hook, which folds the imported task without a snapshot.
func BenchmarkNATSHookInProcess(b *testing.B) {
	b.Setenv("TASKLOG_SERVE", "off")
	ws, url := benchNATSTask(b)
	benchNATSHooks(b, ws, url)
}

// BenchmarkNATSHookViaServe is BenchmarkNATSHookInProcess through 'replay serve --store', which
// keeps the stream and the task's session open: a hook connects to its socket instead of to
// the NATS server.
func BenchmarkNATSHookViaServe(b *testing.B) {
	b.Setenv("TASKLOG_SERVE", "on")
	ws, url := benchNATSTask(b)
	done := make(chan int, 1)
	go func() { done <- cmdServe([]string{"--store", url, "--idle", "0"}, io.Discard, io.Discard) }()
	b.Cleanup(func() {
		replayHere("serve", "--stop", "--store", url)
		<-done
	})
	waitServer(b, natsLoc(url).SideFile())
	benchNATSHooks(b, ws, url)
}

// benchNATSTask is benchHookTask's workspace and task, the task imported into a stream of an
// in-process NATS server; it returns the workspace and the stream's URL.
func benchNATSTask(b *testing.B) (ws, url string) {
	dir, ws, db := benchHookTask(b)
	b.Setenv("HOME", dir)
	b.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	ns := natsServer(b, filepath.Join(dir, "nats"), 0)
	url = ns.ClientURL() + "/BENCH"
	task := agentlog.TaskID(agentlog.ClaudeCode, benchHookSession).String()
	export := filepath.Join(dir, "task.jsonl")
	if code, _, stderr := replayHere("export", task, "--db", db, "-o", export); code != exitOK {
		b.Fatalf("export: %s", stderr)
	}
	if code, _, stderr := replayHere("import", export, "--store", url); code != exitOK {
		b.Fatalf("import: %s", stderr)
	}
	return ws, url
}

// benchNATSHooks runs b.N PreToolUse hooks of benchHookSession on the store at url, after a
// first one (first-ms) that folds the imported task and writes its snapshots.
func benchNATSHooks(b *testing.B, ws, url string) {
	hook := func(i int) time.Duration {
		return hookInProcess(b, benchReadPayload(benchHookSession, ws, i), "--store", url)
	}
	first := hook(-1)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		times = append(times, hook(i))
	}
	b.StopTimer()
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
	reportPercentiles(b, times)
}
