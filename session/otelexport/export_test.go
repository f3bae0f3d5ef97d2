package otelexport

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasklog/tasklog/session/otelexport/otlptest"
)

// waitLong is how long a test waits for what should come at once: a machine 10x slower than
// usual, busy.
const waitLong = 2 * time.Minute

// env is a fake environment for Config.Getenv.
func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

func TestConfigEnabled(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		want bool
	}{
		{"nothing set", Config{Getenv: env()}, false},
		{"flag", Config{Endpoint: "http://127.0.0.1:4318", Getenv: env()}, true},
		{"endpoint variable", Config{Getenv: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")}, true},
		{"traces endpoint variable", Config{Getenv: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces")}, true},
		{"sdk disabled", Config{Getenv: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_SDK_DISABLED", "true")}, false},
		{"traces exporter none", Config{Endpoint: "http://c:4318", Getenv: env("OTEL_TRACES_EXPORTER", "none")}, false},
	}
	for _, tt := range tests {
		if got := tt.c.Enabled(); got != tt.want {
			t.Errorf("%s: Enabled %v, want %v", tt.name, got, tt.want)
		}
	}
	if _, err := NewExporter(context.Background(), Config{Getenv: env()}); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("NewExporter without an endpoint: %v, want ErrNotConfigured", err)
	}
	for _, v := range [][2]string{{"OTEL_SDK_DISABLED", "true"}, {"OTEL_TRACES_EXPORTER", "none"}} {
		_, err := NewExporter(context.Background(), Config{Endpoint: "http://c:4318", Getenv: env(v[0], v[1])})
		if !errors.Is(err, ErrDisabled) || errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), v[0]+"="+v[1]) {
			t.Errorf("NewExporter with an endpoint and %s=%s: %v, want ErrDisabled naming the variable", v[0], v[1], err)
		}
	}
	if _, err := NewExporter(context.Background(), Config{Endpoint: "http://c:4318", Protocol: "thrift", Getenv: env()}); err == nil {
		t.Error("NewExporter with protocol thrift: no error")
	}
	if o := (Config{Getenv: env("OTEL_LOG_USER_PROMPTS", "1")}).Options(); !o.UserPrompts {
		t.Error("OTEL_LOG_USER_PROMPTS=1 does not turn UserPrompts on")
	}
}

func TestConfigCheck(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		ok   bool
	}{
		{"nothing set", Config{Getenv: env()}, true},
		{"URL", Config{Endpoint: "http://127.0.0.1:4318", Getenv: env()}, true},
		{"host:port", Config{Endpoint: "127.0.0.1:4318", Getenv: env()}, false},
		{"grpc host:port", Config{Endpoint: "http://127.0.0.1:4317", Protocol: ProtocolGRPC, Getenv: env()}, true},
		{"unknown protocol", Config{Getenv: env("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift")}, false},
	}
	for _, tt := range tests {
		err := tt.c.Check()
		if (err == nil) != tt.ok {
			t.Errorf("%s: Check: %v, want ok %v", tt.name, err, tt.ok)
		}
		if tt.c.Endpoint == "" || err != nil {
			continue
		}
		if _, nerr := NewExporter(context.Background(), tt.c); nerr != nil {
			t.Errorf("%s: Check passes, NewExporter: %v", tt.name, nerr)
		}
	}
}

// TestExportToReceiver sends a recorded task to an OTLP/HTTP receiver: every span arrives with
// its id, parent, name, recorded times and attributes, under the configured service name.
func TestExportToReceiver(t *testing.T) {
	g, err := otlptest.NewGRPCReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := otlptest.NewReceiver()
	defer h.Close()
	t.Run(ProtocolHTTP, func(t *testing.T) { exportToReceiver(t, ProtocolHTTP, h.URL(), h.Spans) })
	t.Run(ProtocolGRPC, func(t *testing.T) { exportToReceiver(t, ProtocolGRPC, g.URL(), g.Spans) })
}

func exportToReceiver(t *testing.T, protocol, endpoint string, received func() []otlptest.Span) {
	db, task := importLog(t, "claude-code.jsonl")
	ctx := context.Background()
	exp, err := NewExporter(ctx, Config{Endpoint: endpoint, Protocol: protocol, ServiceName: "shop-agent", Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(ctx)
	n, err := Export(ctx, db, task, exp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Trace(ctx, db, task, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := received()
	if n != len(want) || len(got) != len(want) {
		t.Fatalf("sent %d, received %d spans, want %d", n, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.TraceID != w.TraceID || g.SpanID != w.SpanID || g.Parent != w.Parent || g.Name != w.Name ||
			!g.Start.Equal(w.Start) || !g.End.Equal(w.End) || len(g.Attrs) != len(w.Attrs) || len(g.Events) != len(w.Events) {
			t.Errorf("span %d: received %+v\nwant %+v", i, g, w)
		}
		if g.Resource["service.name"] != "shop-agent" {
			t.Errorf("span %d: service.name %q", i, g.Resource["service.name"])
		}
	}
}

// hungCollector accepts connections and never answers.
type hungCollector struct {
	ln       net.Listener
	mu       sync.Mutex
	conns    []net.Conn
	accepted chan struct{}
}

func newHungCollector(t *testing.T) *hungCollector {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungCollector{ln: ln, accepted: make(chan struct{}, 64)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
			select {
			case h.accepted <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		h.mu.Lock()
		for _, c := range h.conns {
			c.Close()
		}
		h.mu.Unlock()
	})
	return h
}

// TestQueueHungCollector: with a collector that accepts and never answers, and an exporter
// that would wait an hour for it, Enqueue still returns at once (the test would hang
// otherwise): the queue fills, and what does not fit is dropped and counted; Close gives up
// when its context ends and counts what was left as dropped.
func TestQueueHungCollector(t *testing.T) {
	h := newHungCollector(t)
	exp, err := NewExporter(context.Background(), Config{Endpoint: "http://" + h.ln.Addr().String(), Timeout: time.Hour, Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	const size = 8
	q := NewQueue(exp, size, nil)
	span := Span{TraceID: "0102030405060708090a0b0c0d0e0f10", SpanID: "0102030405060708", Name: "x", Start: time.Unix(1, 0), End: time.Unix(2, 0)}
	q.Enqueue([]Span{span})
	select {
	case <-h.accepted:
	case <-time.After(waitLong):
		t.Fatal("the exporter never connected")
	}
	// The first span is in flight and hangs; the queue takes size more, then drops.
	const total = 1000
	for range total {
		q.Enqueue([]Span{span})
	}
	if q.Len() != size || q.Dropped() != total-size {
		t.Fatalf("queued %d, dropped %d; want %d and %d", q.Len(), q.Dropped(), size, total-size)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close on a hung collector: %v, want context.Canceled", err)
	}
	if q.Dropped() != total || q.Sent() != 0 {
		t.Errorf("after Close: dropped %d, sent %d; want %d and 0", q.Dropped(), q.Sent(), total)
	}
}

// TestQueueBatches: spans enqueued one hook at a time go out together, in one request, when
// the delay ends or the queue closes; batchSize waiting spans go at once, without the delay.
func TestQueueBatches(t *testing.T) {
	c := &collect{}
	q := newQueue(c, 0, time.Hour, nil)
	span := Span{TraceID: "0102030405060708090a0b0c0d0e0f10", SpanID: "0102030405060708", Name: "x"}
	for range 3 {
		q.Enqueue([]Span{span})
	}
	if got := c.sent(); len(got) != 0 {
		t.Fatalf("sent %v before the delay ended", got)
	}
	big := make([]Span, batchSize)
	for i := range big {
		big[i] = span
	}
	q.Enqueue(big)
	deadline := time.Now().Add(waitLong)
	for len(c.sent()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := c.sent(); len(got) != 1 || got[0] != batchSize {
		t.Fatalf("with %d spans waiting, sent %v; want one request of %d at once", batchSize+3, got, batchSize)
	}
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := c.sent(); !slices.Equal(got, []int{batchSize, 3}) {
		t.Errorf("sent requests of %v spans, want [%d 3]", got, batchSize)
	}
	if q.Sent() != batchSize+3 || q.Dropped() != 0 {
		t.Errorf("sent %d, dropped %d", q.Sent(), q.Dropped())
	}
}

// BenchmarkEnqueueHung is the cost a request pays for export when the collector hangs.
func BenchmarkEnqueueHung(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	exp, err := NewExporter(context.Background(), Config{Endpoint: "http://" + ln.Addr().String(), Timeout: time.Hour, Getenv: env()})
	if err != nil {
		b.Fatal(err)
	}
	q := NewQueue(exp, 0, nil)
	spans := []Span{{TraceID: "0102030405060708090a0b0c0d0e0f10", SpanID: "0102030405060708", Name: "x"}}
	b.ResetTimer()
	for range b.N {
		q.Enqueue(spans)
	}
	b.StopTimer()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q.Close(ctx)
}
