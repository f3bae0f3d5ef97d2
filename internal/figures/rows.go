package main

// Bench is one run of a package's benchmarks: the -bench regexp, the -benchtime of a full
// measurement and of -quick, and the inputs it needs. Rows that share a Bench share its run.
type Bench struct {
	Pkg       string  // package path relative to the module root: "store", "cmd/replay"
	Regexp    string  // passed to -bench
	Benchtime string  // -benchtime of a full measurement: "1s", "400x"
	Quick     string  // -benchtime with -quick
	Needs     []Input // inputs outside the repository; the row is skipped with a note without them
}

// Input is a folder outside the repository a benchmark reads: $Env when set, else Default
// (relative to the module root); Check is the file or folder under it that must exist.
type Input struct {
	Env     string
	Default string
	Check   string
}

// Row is one line of the table: what it measures, the benchmark run it comes from, and the
// figures it shows, in order.
type Row struct {
	What  string
	Bench Bench
	Parts []Part
}

// Part is one figure of a row: the value of one metric of one benchmark (its full name, without
// the -GOMAXPROCS suffix) over the runs, after an optional label.
type Part struct {
	Label  string
	Name   string
	Metric Metric
}

// The inputs kept beside the checkout.
var (
	clineCorpus = Input{Env: "TASKLOG_BENCH", Default: "../shared/bench", Check: "cline-corpus/ws50"}
	samples     = Input{Env: "TASKLOG_SAMPLES", Default: "../shared/samples", Check: "rules"}
	piSample    = Input{Env: "TASKLOG_SAMPLES", Default: "../shared/samples",
		Check: "sessions/pi/badlogic__pi-mono__packages__coding-agent__test__fixtures__large-session.jsonl"}
)

// The benchmark runs of the table. A run whose benchmark builds a large fixture per iteration
// count is given a fixed count (Nx) so that the fixture is built once or twice, not once per
// step of the testing package's ramp-up.
var (
	benchPaired   = Bench{Pkg: "store", Regexp: "^BenchmarkDurableAppendPaired$", Benchtime: "300x", Quick: "20x"}
	benchReopen   = Bench{Pkg: "store", Regexp: "^BenchmarkReopenAppend$", Benchtime: "50x", Quick: "3x"}
	benchGroup    = Bench{Pkg: "store", Regexp: "^BenchmarkGroupCommit$/^writers=(8|64)$", Benchtime: "2000x", Quick: "200x"}
	benchRead     = Bench{Pkg: "store", Regexp: "^(BenchmarkRead|BenchmarkDiskUsage)$", Benchtime: "5x", Quick: "1x"}
	benchEvaluate = Bench{Pkg: "rules", Regexp: "^BenchmarkEvaluate", Benchtime: "1000x", Quick: "20x"}
	benchFold     = Bench{Pkg: "projections", Regexp: "^(BenchmarkFold|BenchmarkContext|BenchmarkResume)$", Benchtime: "0.5s", Quick: "10x"}
	benchCline    = Bench{Pkg: "session", Regexp: "^BenchmarkClineCorpus$/^ws(50|1000)$/^paths(10|100)\\.json$/^(watched|checked)$",
		Benchtime: "400x", Quick: "20x", Needs: []Input{clineCorpus}}
	benchDecide  = Bench{Pkg: "session", Regexp: "^BenchmarkDecide$/^events=100$/^rules=(watched|folder)$", Benchtime: "2000x", Quick: "50x"}
	benchInto    = Bench{Pkg: "session", Regexp: "^BenchmarkDecideInto$/^rules=(watched|folder)$", Benchtime: "2000x", Quick: "50x"}
	benchAfterTC = Bench{Pkg: "session", Regexp: "^Benchmark(Decide|DecideInto)AfterToolCall$/^rules=(watched|folder)$", Benchtime: "2000x", Quick: "50x"}
	benchMany    = Bench{Pkg: "session", Regexp: "^BenchmarkDecideManyRules$", Benchtime: "50x", Quick: "3x"}
	benchRecord  = Bench{Pkg: "session", Regexp: "^BenchmarkRecord$", Benchtime: "2000x", Quick: "50x"}
	benchHookIn  = Bench{Pkg: "session", Regexp: "^BenchmarkHookSampleRules$", Benchtime: "2000x", Quick: "50x", Needs: []Input{samples}}
	benchReopenD = Bench{Pkg: "session", Regexp: "^BenchmarkReopenDecide$", Benchtime: "30x", Quick: "2x"}
	benchVerify  = Bench{Pkg: "session", Regexp: "^(BenchmarkVerify|BenchmarkExplain)$", Benchtime: "3x", Quick: "1x"}
	benchMillion = Bench{Pkg: "session", Regexp: "^BenchmarkVerifyMillion$", Benchtime: "3x", Quick: "1x"}
	benchImport  = Bench{Pkg: "events/agentlog", Regexp: "^BenchmarkImportPiLarge$", Benchtime: "20x", Quick: "2x", Needs: []Input{piSample}}
	benchHook    = Bench{Pkg: "cmd/replay", Regexp: "^(BenchmarkHookRoundTrip|BenchmarkHookInProcess|BenchmarkProcessStart)$", Benchtime: "200x", Quick: "5x"}
	benchClient  = Bench{Pkg: "cmd/replay", Regexp: "^BenchmarkHookClientRoundTrip$", Benchtime: "200x", Quick: "5x"}
	benchOtel    = Bench{Pkg: "cmd/replay", Regexp: "^BenchmarkServeHookOtel$", Benchtime: "100x", Quick: "5x"}
	benchReal    = Bench{Pkg: "session", Regexp: "^(BenchmarkVerifyRealistic|BenchmarkVerifyCollector|BenchmarkVerifyReadOnce|BenchmarkImportRealistic)$", Benchtime: "2x", Quick: "1x", Needs: []Input{samples}}
	benchMix     = Bench{Pkg: "store", Regexp: "^(BenchmarkDiskUsageRealistic|BenchmarkCompressionPaired)$", Benchtime: "3x", Quick: "1x"}
	benchAfter   = Bench{Pkg: "store", Regexp: "^BenchmarkAppendAfterDecision$", Benchtime: "2000x", Quick: "100x"}
	benchPages   = Bench{Pkg: "session/web", Regexp: "^BenchmarkPages$/^(list|task|part)/(cold|warm)$", Benchtime: "3x", Quick: "1x"}
	benchHTTP    = Bench{Pkg: "session/serve", Regexp: "^(BenchmarkHookOverHTTP|BenchmarkHookOtel)$", Benchtime: "500x", Quick: "20x"}
)

// cline is the part of a Cline corpus cell: ws "ws50", paths "paths10", mode "watched".
func cline(label, ws, paths, mode, kind string, m Metric) Part {
	return Part{Label: label, Name: "BenchmarkClineCorpus/" + ws + "/" + paths + ".json/" + mode + "/" + kind, Metric: m}
}

// Rows is the table, in the order of the page.
var Rows = []Row{
	{What: "durable append, median, against a raw bbolt put+commit of the same bytes, alternating: ratio / the append / the put+commit",
		Bench: benchPaired, Parts: []Part{
			{Name: "BenchmarkDurableAppendPaired", Metric: Metric{Unit: "ratio", Kind: Ratio}},
			{Name: "BenchmarkDurableAppendPaired", Metric: Metric{Unit: "tasklog-ns/append", Kind: Duration}},
			{Name: "BenchmarkDurableAppendPaired", Metric: Metric{Unit: "bbolt-ns/commit", Kind: Duration}},
		}},
	{What: "open the file, read a task's head, append one event, close, p50, no fsync; 10k / 100k / 1M-event task",
		Bench: benchReopen, Parts: []Part{
			{Name: "BenchmarkReopenAppend/events=10000/nosync", Metric: P50us},
			{Name: "BenchmarkReopenAppend/events=100000/nosync", Metric: P50us},
			{Name: "BenchmarkReopenAppend/events=1000000/nosync", Metric: P50us},
		}},
	{What: "the same, durable; 10k / 100k / 1M-event task",
		Bench: benchReopen, Parts: []Part{
			{Name: "BenchmarkReopenAppend/events=10000/durable", Metric: P50us},
			{Name: "BenchmarkReopenAppend/events=100000/durable", Metric: P50us},
			{Name: "BenchmarkReopenAppend/events=1000000/durable", Metric: P50us},
		}},
	{What: "group commit, durable appends of one event from 8 / 64 writers on different tasks",
		Bench: benchGroup, Parts: []Part{
			{Name: "BenchmarkGroupCommit/writers=8", Metric: Metric{Unit: "events/commit", Kind: Number, Label: "events per fsync"}},
			{Name: "BenchmarkGroupCommit/writers=64", Metric: Metric{Unit: "events/commit", Kind: Number, Label: "events per fsync"}},
		}},
	{What: "read a 100k-event task, envelopes / with payloads",
		Bench: benchRead, Parts: []Part{
			{Name: "BenchmarkRead/envelopes", Metric: EvS},
			{Name: "BenchmarkRead/payloads", Metric: EvS},
		}},
	{What: "bytes on disk per event / of payload per event, 100k-event task",
		Bench: benchRead, Parts: []Part{
			{Name: "BenchmarkDiskUsage", Metric: Metric{Unit: "disk-B/event", Kind: Bytes}},
			{Name: "BenchmarkDiskUsage", Metric: Metric{Unit: "payload-B/event", Kind: Bytes}},
		}},
	{What: "a recorded mix (1% decisions, 20,000 events, appended as hooks append): bytes in use per event, format 4 / format 3 / uncompressed (format 2); payload bytes per event; in use ÷ payload, format 4 / format 3 / uncompressed",
		Bench: benchMix, Parts: []Part{
			{Name: "BenchmarkDiskUsageRealistic/compressed", Metric: Metric{Unit: "inuse-B/event", Kind: Bytes}},
			{Name: "BenchmarkDiskUsageRealistic/compressed-format3", Metric: Metric{Unit: "inuse-B/event", Kind: Bytes}},
			{Name: "BenchmarkDiskUsageRealistic/uncompressed", Metric: Metric{Unit: "inuse-B/event", Kind: Bytes}},
			{Label: "payload", Name: "BenchmarkDiskUsageRealistic/compressed", Metric: Metric{Unit: "payload-B/event", Kind: Bytes}},
			{Name: "BenchmarkDiskUsageRealistic/compressed", Metric: Metric{Unit: "inuse/payload", Kind: Ratio}},
			{Name: "BenchmarkDiskUsageRealistic/compressed-format3", Metric: Metric{Unit: "inuse/payload", Kind: Ratio}},
			{Name: "BenchmarkDiskUsageRealistic/uncompressed", Metric: Metric{Unit: "inuse/payload", Kind: Ratio}},
		}},
	{What: "append of one tool call after a decision, no fsync, median, format 4 / format 3, in turn",
		Bench: benchAfter, Parts: []Part{
			{Name: "BenchmarkAppendAfterDecision", Metric: Metric{Unit: "format4-ns/append", Kind: Duration}},
			{Name: "BenchmarkAppendAfterDecision", Metric: Metric{Unit: "format3-ns/append", Kind: Duration}},
		}},
	{What: "what compression costs on that mix: durable append, median, compressed / uncompressed, in turn; reading the 20,000 events, compressed / uncompressed",
		Bench: benchMix, Parts: []Part{
			{Name: "BenchmarkCompressionPaired/append", Metric: Metric{Unit: "compressed-ns/append", Kind: Duration}},
			{Name: "BenchmarkCompressionPaired/append", Metric: Metric{Unit: "uncompressed-ns/append", Kind: Duration}},
			{Name: "BenchmarkCompressionPaired/read", Metric: Metric{Unit: "compressed-events/s", Kind: Rate, Label: "events/s"}},
			{Name: "BenchmarkCompressionPaired/read", Metric: Metric{Unit: "uncompressed-events/s", Kind: Rate, Label: "events/s"}},
		}},
	evaluateRow("1,000 rules × 100 paths", "BenchmarkEvaluate1000x100"),
	evaluateRow("5,000 rules × 100 paths", "BenchmarkEvaluate5000x100"),
	evaluateRow("1,000 rules × 10 paths", "BenchmarkEvaluate1000x10"),
	evaluateRow("50 rules × 100 paths", "BenchmarkEvaluate50x100"),
	{What: "fold a 10k-event log: events per second / allocated per event",
		Bench: benchFold, Parts: []Part{
			{Name: "BenchmarkFold", Metric: EvS},
			{Name: "BenchmarkFold", Metric: BOp.Per(10_000)},
		}},
	{What: "context at turn 10,001 of 100k events (100 paths) / at turn 11 of a short task (40 paths)",
		Bench: benchFold, Parts: []Part{
			{Name: "BenchmarkContext/turn=10001", Metric: NsOp},
			{Name: "BenchmarkContext/turn=11", Metric: NsOp},
		}},
	{What: "reopen a 100k-event task: restore the snapshot, fold the worst tail (255 events), build the context",
		Bench: benchFold, Parts: []Part{{Name: "BenchmarkResume", Metric: NsOp}}},
	{What: "`Decide` after a tool call on Cline's corpus, p50, no fsync, the folder watched; 50 rules × 10 / × 100 paths",
		Bench: benchCline, Parts: []Part{
			cline("", "ws50", "paths10", "watched", "after-tool-call", P50us),
			cline("", "ws50", "paths100", "watched", "after-tool-call", P50us),
		}},
	{What: "the same, cached (nothing new since the last decision)",
		Bench: benchCline, Parts: []Part{
			cline("", "ws50", "paths10", "watched", "cached", P50us),
			cline("", "ws50", "paths100", "watched", "cached", P50us),
		}},
	{What: "the same after a tool call, p99",
		Bench: benchCline, Parts: []Part{
			cline("", "ws50", "paths10", "watched", "after-tool-call", P99us),
			cline("", "ws50", "paths100", "watched", "after-tool-call", P99us),
		}},
	{What: "the same after a tool call, p50, the folder checked file by file",
		Bench: benchCline, Parts: []Part{
			cline("", "ws50", "paths10", "checked", "after-tool-call", P50us),
			cline("", "ws50", "paths100", "checked", "after-tool-call", P50us),
		}},
	{What: "the same, 1,000 rules × 10 / × 100 paths, watched",
		Bench: benchCline, Parts: []Part{
			cline("", "ws1000", "paths10", "watched", "after-tool-call", P50us),
			cline("", "ws1000", "paths100", "watched", "after-tool-call", P50us),
		}},
	{What: "the same, 1,000 rules × 10 / × 100 paths, checked file by file",
		Bench: benchCline, Parts: []Part{
			cline("", "ws1000", "paths10", "checked", "after-tool-call", P50us),
			cline("", "ws1000", "paths100", "checked", "after-tool-call", P50us),
		}},
	{What: "allocated by tasklog per decision, cached, 100-event task, 50 rules, watched / checked file by file; bbolt's beside it",
		Bench: benchDecide, Parts: []Part{
			{Name: "BenchmarkDecide/events=100/rules=watched", Metric: Metric{Unit: "tasklog-B/op", Kind: Bytes}},
			{Name: "BenchmarkDecide/events=100/rules=folder", Metric: Metric{Unit: "tasklog-B/op", Kind: Bytes}},
			{Label: "bbolt", Name: "BenchmarkDecide/events=100/rules=watched", Metric: Metric{Unit: "bbolt-B/op", Kind: Bytes}},
			{Label: "bbolt", Name: "BenchmarkDecide/events=100/rules=folder", Metric: Metric{Unit: "bbolt-B/op", Kind: Bytes}},
		}},
	{What: "the same with `DecideInto`, the last decision given back, watched / checked file by file",
		Bench: benchInto, Parts: []Part{
			{Name: "BenchmarkDecideInto/rules=watched", Metric: Metric{Unit: "tasklog-B/op", Kind: Bytes}},
			{Name: "BenchmarkDecideInto/rules=folder", Metric: Metric{Unit: "tasklog-B/op", Kind: Bytes}},
		}},
	{What: "allocated by tasklog per decision after a tool call that brings a new path (100 paths, 50 rules), watched / checked file by file: `Decide`, then `DecideInto` (the last decision given back)",
		Bench: benchAfterTC, Parts: []Part{
			{Name: "BenchmarkDecideAfterToolCall/rules=watched", Metric: Metric{Unit: "tasklog-B/op", Kind: Bytes}},
			{Name: "BenchmarkDecideAfterToolCall/rules=folder", Metric: Metric{Unit: "tasklog-B/op", Kind: Bytes}},
			{Name: "BenchmarkDecideIntoAfterToolCall/rules=watched", Metric: Metric{Unit: "tasklog-B/op", Kind: Bytes}},
			{Name: "BenchmarkDecideIntoAfterToolCall/rules=folder", Metric: Metric{Unit: "tasklog-B/op", Kind: Bytes}},
		}},
	{What: "allocated by tasklog per decision after a tool call on Cline's corpus, the folder watched, 50 rules × 10 / × 100 paths: `Decide` / `DecideInto` (the last decision given back)",
		Bench: benchCline, Parts: []Part{
			cline("", "ws50", "paths10", "watched", "after-tool-call", Metric{Unit: "tasklog-B/op", Kind: Bytes}),
			cline("", "ws50", "paths100", "watched", "after-tool-call", Metric{Unit: "tasklog-B/op", Kind: Bytes}),
			cline("", "ws50", "paths10", "watched", "after-tool-call-into", Metric{Unit: "tasklog-B/op", Kind: Bytes}),
			cline("", "ws50", "paths100", "watched", "after-tool-call-into", Metric{Unit: "tasklog-B/op", Kind: Bytes}),
		}},
	{What: "`Decide` after a tool call over 5,000 rule files, p50, no fsync, watched / checked file by file",
		Bench: benchMany, Parts: []Part{
			{Name: "BenchmarkDecideManyRules/rules=5000/watched", Metric: P50us},
			{Name: "BenchmarkDecideManyRules/rules=5000/checked", Metric: P50us},
		}},
	{What: "the same over 10,000 rule files, watched / checked file by file",
		Bench: benchMany, Parts: []Part{
			{Name: "BenchmarkDecideManyRules/rules=10000/watched", Metric: P50us},
			{Name: "BenchmarkDecideManyRules/rules=10000/checked", Metric: P50us},
		}},
	{What: "`Record` one tool call, no fsync, mean",
		Bench: benchRecord, Parts: []Part{{Name: "BenchmarkRecord", Metric: NsOp}}},
	{What: "a Claude Code `PreToolUse` hook in the process over the samples' 62 rules (`AgentSession.Hook`: record, decide, deliver, one commit; a new path most hooks), no fsync: mean / allocated",
		Bench: benchHookIn, Parts: []Part{{Name: "BenchmarkHookSampleRules", Metric: NsOp}, {Name: "BenchmarkHookSampleRules", Metric: BOp}}},
	reopenDecideRow("first decision after opening a 10k / 100k / 1M-event task (`store.Open`, `session.Open`, `Record`, `Decide`, close), p50, no fsync", "nosync", "total-"),
	reopenDecideRow("the same, durable", "durable", "total-"),
	reopenDecideRow("of which `store.Open`, no fsync", "nosync", "open-db-"),
	reopenDecideRow("of which `session.Open`, no fsync", "nosync", "open-task-"),
	reopenDecideRow("of which `Decide`, no fsync", "nosync", "decide-"),
	{What: "verify a 100k-event task with 1,000 decisions (chain + recompute): one verify, mean / events per second",
		Bench: benchVerify, Parts: []Part{
			{Name: "BenchmarkVerify", Metric: NsOp},
			{Name: "BenchmarkVerify", Metric: EvS},
		}},
	{What: "verify a 1M-event task with 1,000 decisions: events per CPU second / per second of wall clock / one verify, p50",
		Bench: benchMillion, Parts: []Part{
			{Name: "BenchmarkVerifyMillion", Metric: Metric{Unit: "events/cpu-s", Kind: Rate, Label: "events/cpu-s"}},
			{Name: "BenchmarkVerifyMillion", Metric: EvS},
			{Name: "BenchmarkVerifyMillion", Metric: P50us},
		}},
	{What: "the same: allocated per event / peak live heap",
		Bench: benchMillion, Parts: []Part{
			{Name: "BenchmarkVerifyMillion", Metric: Metric{Unit: "B/event", Kind: Bytes}},
			{Name: "BenchmarkVerifyMillion", Metric: Metric{Unit: "peak-heap-MB", Kind: Bytes, Scale: 1 << 20}},
		}},
	{What: "verify a task recorded as hooks record one (200k events, 1.2% decisions of ~45 KB, the samples' 62 rules): events per CPU second / per second of wall clock",
		Bench: benchReal, Parts: []Part{
			{Name: "BenchmarkVerifyRealistic", Metric: Metric{Unit: "events/cpu-s", Kind: Rate, Label: "events/cpu-s"}},
			{Name: "BenchmarkVerifyRealistic", Metric: EvS},
		}},
	{What: "the same in turn with the collector at Go's default (`GOGC=100`) and at 400, `replay verify`'s: ratio of the speeds / events per second at 100 / at 400 / peak heap at 100 / at 400",
		Bench: benchReal, Parts: []Part{
			{Name: "BenchmarkVerifyCollector", Metric: Metric{Unit: "gogc400/gogc100", Kind: Ratio}},
			{Name: "BenchmarkVerifyCollector", Metric: Metric{Unit: "gogc100-events/s", Kind: Rate, Label: "events/s"}},
			{Name: "BenchmarkVerifyCollector", Metric: Metric{Unit: "gogc400-events/s", Kind: Rate, Label: "events/s"}},
			{Name: "BenchmarkVerifyCollector", Metric: Metric{Unit: "gogc100-peak-heap-MB", Kind: Bytes, Scale: 1 << 20}},
			{Name: "BenchmarkVerifyCollector", Metric: Metric{Unit: "gogc400-peak-heap-MB", Kind: Bytes, Scale: 1 << 20}},
		}},
	{What: "the same in turn, the log read once (the replay takes the events the chain check hands on, as with bbolt) / twice (check and replay side by side, as with NATS): ratio / events per second each",
		Bench: benchReal, Parts: []Part{
			{Name: "BenchmarkVerifyReadOnce", Metric: Metric{Unit: "once/twice", Kind: Ratio}},
			{Name: "BenchmarkVerifyReadOnce", Metric: Metric{Unit: "once-events/s", Kind: Rate, Label: "events/s"}},
			{Name: "BenchmarkVerifyReadOnce", Metric: Metric{Unit: "twice-events/s", Kind: Rate, Label: "events/s"}},
		}},
	{What: "`replay import` of the export of such a task (100k events, 112 MB): events per CPU second / per second of wall clock / peak live heap",
		Bench: benchReal, Parts: []Part{
			{Name: "BenchmarkImportRealistic", Metric: Metric{Unit: "events/cpu-s", Kind: Rate, Label: "events/cpu-s"}},
			{Name: "BenchmarkImportRealistic", Metric: EvS},
			{Name: "BenchmarkImportRealistic", Metric: Metric{Unit: "peak-heap-MB", Kind: Bytes, Scale: 1 << 20}},
		}},
	{What: "explain a rule at the last turn of the 100k-event task, mean",
		Bench: benchVerify, Parts: []Part{{Name: "BenchmarkExplain", Metric: NsOp}}},
	{What: "import the 1 MB pi sample: throughput / peak live heap above the heap before",
		Bench: benchImport, Parts: []Part{
			{Name: "BenchmarkImportPiLarge", Metric: Metric{Unit: "MB/s", Kind: Number, Label: "MB/s"}},
			{Name: "BenchmarkImportPiLarge", Metric: Metric{Unit: "peak-heap-B", Kind: Bytes}},
		}},
	{What: "`replay hook` round trip as a process (start, open, parse, record, decide, deliver, reply), PreToolUse on a 10,000-event task, durable, no server: p50 / p99",
		Bench: benchHook, Parts: percentiles("BenchmarkHookRoundTrip", "")},
	{What: "the same in the benchmark's process (no process start): p50 / p99",
		Bench: benchHook, Parts: percentiles("BenchmarkHookInProcess", "")},
	{What: "a hook through a running server, started as `replay-hook` (PreToolUse, 10,000-event task, durable): p50 / p99",
		Bench: benchClient, Parts: percentiles("BenchmarkHookClientRoundTrip", "")},
	{What: "in turn with it: `replay hook` through the same server, p50 / p99",
		Bench: benchClient, Parts: percentiles("BenchmarkHookClientRoundTrip", "replay-")},
	{What: "in turn with it: a Go hello world, p50 / p99",
		Bench: benchClient, Parts: percentiles("BenchmarkHookClientRoundTrip", "hello-")},
	{What: "in turn with it: the hook over the socket from the benchmark's process, p50 / p99",
		Bench: benchClient, Parts: percentiles("BenchmarkHookClientRoundTrip", "socket-")},
	{What: "a Qwen Code hook over HTTP on a kept-alive connection (`replay serve --http`), PostToolUse, 10,000-event task, durable: p50 / p99",
		Bench: benchHTTP, Parts: percentiles("BenchmarkHookOverHTTP/durable", "")},
	{What: "the same without fsync: p50 / p99 / allocated per hook / allocations per hook",
		Bench: benchHTTP, Parts: append(percentiles("BenchmarkHookOverHTTP/nosync", ""),
			Part{Name: "BenchmarkHookOverHTTP/nosync", Metric: BOp},
			Part{Name: "BenchmarkHookOverHTTP/nosync", Metric: Metric{Unit: "allocs/op", Kind: Number}})},
	{What: "a hook through a running server (process start) with OpenTelemetry export off / to a collector that never answers / to one that answers, p50",
		Bench: benchOtel, Parts: otelParts("BenchmarkServeHookOtel", P50ms)},
	{What: "the same, p99",
		Bench: benchOtel, Parts: otelParts("BenchmarkServeHookOtel", P99ms)},
	{What: "over the socket alone (no process start, no fsync), export off / never answered / answered, p50",
		Bench: benchHTTP, Parts: otelParts("BenchmarkHookOtel", P50ms)},
	{What: "the same, p99",
		Bench: benchHTTP, Parts: otelParts("BenchmarkHookOtel", P99ms)},
	{What: "the web app over 50 tasks of 10,000 events: the list, first load after a start / again; a task page, first load / again; a cell of its grid clicked (the server's side)",
		Bench: benchPages, Parts: []Part{
			{Name: "BenchmarkPages/list/cold", Metric: NsOp},
			{Name: "BenchmarkPages/list/warm", Metric: NsOp},
			{Name: "BenchmarkPages/task/cold", Metric: NsOp},
			{Name: "BenchmarkPages/task/warm", Metric: NsOp},
			{Name: "BenchmarkPages/part/warm", Metric: NsOp},
		}},
	{What: "starting the binary alone (`replay --version`): p50 / p99",
		Bench: benchHook, Parts: percentiles("BenchmarkProcessStart", "")},
}

// evaluateRow is the rule evaluation of one size: p50 with paths matched before and new paths,
// then what a call allocates in each.
func evaluateRow(size, name string) Row {
	return Row{
		What:  "rule evaluation, " + size + ", paths matched before / new paths: p50, then allocated per call",
		Bench: benchEvaluate,
		Parts: []Part{
			{Name: name + "/paths=same", Metric: P50us},
			{Name: name + "/paths=new", Metric: P50us},
			{Name: name + "/paths=same", Metric: BOp},
			{Name: name + "/paths=new", Metric: BOp},
		},
	}
}

// reopenDecideRow is one phase of BenchmarkReopenDecide (its metric prefix) over the three
// task lengths.
func reopenDecideRow(what, mode, phase string) Row {
	var parts []Part
	for _, n := range []string{"10000", "100000", "1000000"} {
		parts = append(parts, Part{Name: "BenchmarkReopenDecide/events=" + n + "/" + mode, Metric: P50us.Named(phase)})
	}
	return Row{What: what, Bench: benchReopenD, Parts: parts}
}

// percentiles are the p50-ms and p99-ms (with prefix) of a benchmark.
func percentiles(name, prefix string) []Part {
	return []Part{{Name: name, Metric: P50ms.Named(prefix)}, {Name: name, Metric: P99ms.Named(prefix)}}
}

// otelParts are the export off, hung and receiver series of an OpenTelemetry benchmark.
func otelParts(name string, m Metric) []Part {
	var parts []Part
	for _, mode := range []string{"off-", "hung-", "receiver-"} {
		parts = append(parts, Part{Name: name, Metric: m.Named(mode)})
	}
	return parts
}
