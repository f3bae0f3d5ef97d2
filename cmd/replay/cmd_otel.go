package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/session/otelexport"
	"github.com/tasklog/tasklog/store"
)

// otelFlagSet adds the OpenTelemetry flags of serve and otel export to fs; the standard OTEL_*
// variables configure the same when a flag is not given.
func otelFlagSet(fs *flag.FlagSet) *otelexport.Config {
	c := &otelexport.Config{}
	fs.StringVar(&c.Endpoint, "otel-endpoint", "", "send OpenTelemetry traces to this OTLP collector, e.g. http://127.0.0.1:4318 (default $OTEL_EXPORTER_OTLP_ENDPOINT; unset: no export)")
	fs.StringVar(&c.Protocol, "otel-protocol", "", "OTLP protocol: http/protobuf or grpc (default $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fs.StringVar(&c.ServiceName, "otel-service-name", "", "the traces' service.name (default $OTEL_SERVICE_NAME, else tasklog)")
	fs.BoolVar(&c.UserPrompts, "otel-log-user-prompts", false, "put the users' prompts into the traces (default $OTEL_LOG_USER_PROMPTS; off: only their size)")
	return c
}

// cmdOtel is 'replay otel export [TASK...]'.
func cmdOtel(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "export" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return cmdOtel([]string{"export", "-h"}, stdout, stderr)
		}
		fmt.Fprintln(stderr, "usage: replay otel export [flags] [TASK...]")
		return exitUsage
	}
	if v, ok := stderr.(verbWriter); ok {
		stderr = verbWriter{v.Writer, "otel export"} // its errors name the whole verb, as its usage errors do
	}
	f := newFlags("otel export", "[TASK...]", stderr).withJSON()
	cfg := otelFlagSet(f.FlagSet)
	f.Usage = func() {
		fmt.Fprintln(f.Output(), "usage: replay otel export [flags] [TASK...]\n\n"+
			"Sends each task (default: this folder's latest) as one trace to the OTLP collector\n"+
			"OTEL_EXPORTER_OTLP_ENDPOINT or --otel-endpoint names, with the times the log recorded.\n"+
			"--json prints the spans instead of sending them.\n\nflags:")
		f.PrintDefaults()
	}
	pos, code := f.parseOrExit(args[1:], 0, -1)
	if code >= 0 {
		return code
	}
	var exp *otelexport.Exporter
	ctx := context.Background()
	if !f.json {
		var err error
		if exp, err = otelexport.NewExporter(ctx, *cfg); err != nil {
			return fail(stderr, err)
		}
		defer exp.Shutdown(ctx)
	}
	db, task, err := f.openTaskOrLatest(pos[:min(len(pos), 1)], "otel export", stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	tasks := []uuid.UUID{task}
	for _, arg := range pos[min(len(pos), 1):] {
		t, err := resolveTask(db, arg)
		if err != nil {
			return fail(stderr, err)
		}
		tasks = append(tasks, t)
	}
	for _, t := range tasks {
		if f.json {
			spans, err := otelexport.Trace(ctx, db, t, cfg.Options())
			if err != nil {
				return fail(stderr, err)
			}
			if err := printJSON(stdout, spans); err != nil {
				return fail(stderr, err)
			}
			continue
		}
		n, err := otelexport.Export(ctx, db, t, exp, cfg.Options())
		if err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stdout, "task %s: %d spans sent, trace %s\n", t, n, t.String())
	}
	return exitOK
}

// otelLive starts the live export of 'replay serve' when it is configured: the server's
// Appended hook and the function that sends what waits when the server stops. Both are nil
// when export is off.
func otelLive(cfg *otelexport.Config, lg *log.Logger) (func(context.Context, store.Store, uuid.UUID, uint64, uint64) error, func(), error) {
	if !cfg.Enabled() {
		return nil, nil, nil
	}
	exp, err := otelexport.NewExporter(context.Background(), *cfg)
	if err != nil {
		return nil, nil, err
	}
	var failures int
	q := otelexport.NewQueue(exp, 0, func(err error) {
		if failures++; failures <= 3 || failures%100 == 0 {
			lg.Printf("OpenTelemetry export (failure %d): %v", failures, err)
		}
	})
	live := otelexport.NewLive(q, cfg.Options())
	lg.Printf("OpenTelemetry export on (%s)", describeEndpoint(cfg))
	appended := func(ctx context.Context, db store.Store, task uuid.UUID, before, after uint64) error {
		return live.Appended(ctx, db, task, before, after)
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := live.Close(ctx); err != nil {
			lg.Printf("OpenTelemetry export: stopped with spans unsent: %v", err)
		}
		lg.Printf("OpenTelemetry export: %d spans sent, %d failed, %d dropped (queue full)", q.Sent(), q.Failed(), q.Dropped())
		exp.Shutdown(ctx)
	}
	return appended, stop, nil
}

func describeEndpoint(cfg *otelexport.Config) string {
	if cfg.Endpoint != "" {
		return cfg.Endpoint
	}
	return "the endpoint of $OTEL_EXPORTER_OTLP_ENDPOINT"
}
