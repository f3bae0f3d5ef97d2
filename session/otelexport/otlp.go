package otelexport

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The protocols of OTEL_EXPORTER_OTLP_PROTOCOL this package speaks.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// DefaultServiceName is the service.name of tasklog's spans when neither OTEL_SERVICE_NAME
// nor OTEL_RESOURCE_ATTRIBUTES names one.
const DefaultServiceName = "tasklog"

// ErrNotConfigured is returned by NewExporter when no endpoint is configured: export is off.
var ErrNotConfigured = errors.New("no OTLP endpoint is configured: set OTEL_EXPORTER_OTLP_ENDPOINT or pass --otel-endpoint")

// ErrDisabled is returned by NewExporter when OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none turns export off, whatever endpoint is configured.
var ErrDisabled = errors.New("OpenTelemetry export is turned off")

// Config is where and how spans are sent. The zero value with Getenv nil reads only the
// process's environment, the standard OTEL_* variables.
type Config struct {
	// Endpoint is the collector's base URL ("http://127.0.0.1:4318"); it overrides
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_EXPORTER_OTLP_ENDPOINT. For http/protobuf
	// /v1/traces is added to it, as to OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string
	// Protocol is ProtocolHTTP or ProtocolGRPC; "" reads OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
	// then OTEL_EXPORTER_OTLP_PROTOCOL, else ProtocolHTTP.
	Protocol string
	// ServiceName overrides OTEL_SERVICE_NAME.
	ServiceName string
	// UserPrompts puts the users' prompts into the spans; OTEL_LOG_USER_PROMPTS=1 sets it too.
	UserPrompts bool
	// Timeout bounds one export request; 0 means 10s.
	Timeout time.Duration
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

func (c Config) getenv(k string) string {
	if c.Getenv == nil {
		return os.Getenv(k)
	}
	return c.Getenv(k)
}

// Enabled reports whether export is configured: an endpoint is given, by flag or environment,
// and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none turns it off.
func (c Config) Enabled() bool {
	return c.disabledBy() == "" && c.configured()
}

// configured reports whether an endpoint is given, by flag or environment.
func (c Config) configured() bool {
	return c.Endpoint != "" || c.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// disabledBy is the variable that turns export off, as set ("OTEL_SDK_DISABLED=true"); "" when
// none does.
func (c Config) disabledBy() string {
	if v := c.getenv("OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		return "OTEL_SDK_DISABLED=" + v
	}
	if v := c.getenv("OTEL_TRACES_EXPORTER"); strings.EqualFold(v, "none") {
		return "OTEL_TRACES_EXPORTER=" + v
	}
	return ""
}

// Options are the mapping's options the configuration asks for.
func (c Config) Options() Options {
	v := c.getenv("OTEL_LOG_USER_PROMPTS")
	on, _ := strconv.ParseBool(v)
	return Options{UserPrompts: c.UserPrompts || on}
}

// protocol is the configured protocol, checked.
func (c Config) protocol() (string, error) {
	p := c.Protocol
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p == "" {
			p = c.getenv(k)
		}
	}
	switch p {
	case "", ProtocolHTTP:
		return ProtocolHTTP, nil
	case ProtocolGRPC:
		return ProtocolGRPC, nil
	}
	return "", fmt.Errorf("OTLP protocol %q: use %s or %s", p, ProtocolHTTP, ProtocolGRPC)
}

// Check tells whether the configuration's protocol and endpoint flag are ones NewExporter
// takes, without making an exporter.
func (c Config) Check() error {
	proto, err := c.protocol()
	if err != nil {
		return err
	}
	if c.Endpoint != "" && proto == ProtocolHTTP {
		_, err = endpointURL(c.Endpoint)
	}
	return err
}

// endpointURL parses an endpoint flag of the http/protobuf protocol: a URL, not host:port.
func endpointURL(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("OTLP endpoint %q: give a URL such as http://127.0.0.1:4318", endpoint)
	}
	return u, nil
}

// Exporter sends spans over OTLP with a resource (service.name, OTEL_RESOURCE_ATTRIBUTES).
type Exporter struct {
	exp   sdktrace.SpanExporter
	res   *resource.Resource
	scope instrumentation.Scope
}

// NewExporter makes the exporter the configuration names; ErrDisabled when a variable turns
// export off, else ErrNotConfigured when no endpoint is configured. It does not connect: an
// unreachable collector fails the exports, not this.
func NewExporter(ctx context.Context, c Config) (*Exporter, error) {
	if v := c.disabledBy(); v != "" {
		return nil, fmt.Errorf("%w by %s in the environment: unset it to export", ErrDisabled, v)
	}
	if !c.configured() {
		return nil, ErrNotConfigured
	}
	proto, err := c.protocol()
	if err != nil {
		return nil, err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	var exp sdktrace.SpanExporter
	switch proto {
	case ProtocolGRPC:
		opts := []otlptracegrpc.Option{otlptracegrpc.WithTimeout(timeout), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if c.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(c.Endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		opts := []otlptracehttp.Option{otlptracehttp.WithTimeout(timeout), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
		if c.Endpoint != "" {
			u, perr := endpointURL(c.Endpoint)
			if perr != nil {
				return nil, perr
			}
			u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
			opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", DefaultServiceName)}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(),
		resource.WithSchemaURL("https://opentelemetry.io/schemas/"+SemconvVersion))
	if err != nil && res == nil {
		return nil, fmt.Errorf("OTLP resource: %w", err)
	}
	if c.ServiceName != "" {
		res, _ = resource.Merge(res, resource.NewSchemaless(attribute.String("service.name", c.ServiceName)))
	}
	return &Exporter{exp: exp, res: res, scope: instrumentation.Scope{Name: "github.com/tasklog/tasklog/session/otelexport",
		SchemaURL: "https://opentelemetry.io/schemas/" + SemconvVersion}}, nil
}

// Export sends spans, waiting for the collector's answer or ctx's end.
func (e *Exporter) Export(ctx context.Context, spans []Span) error {
	if len(spans) == 0 {
		return nil
	}
	ro := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		stub, err := e.stub(s)
		if err != nil {
			return err
		}
		ro[i] = stub.Snapshot()
	}
	if err := e.exp.ExportSpans(ctx, ro); err != nil {
		return fmt.Errorf("export %d spans: %w", len(spans), err)
	}
	return nil
}

// Shutdown lets go of the exporter's connections.
func (e *Exporter) Shutdown(ctx context.Context) error { return e.exp.Shutdown(ctx) }

func (e *Exporter) stub(s Span) (tracetest.SpanStub, error) {
	tid, err := trace.TraceIDFromHex(s.TraceID)
	if err != nil {
		return tracetest.SpanStub{}, fmt.Errorf("span %s: %w", s.Name, err)
	}
	sid, err := trace.SpanIDFromHex(s.SpanID)
	if err != nil {
		return tracetest.SpanStub{}, fmt.Errorf("span %s: %w", s.Name, err)
	}
	st := tracetest.SpanStub{
		Name:                 s.Name,
		SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
		SpanKind:             trace.SpanKindInternal,
		StartTime:            s.Start,
		EndTime:              s.End,
		Attributes:           keyValues(s.Attrs),
		Resource:             e.res,
		InstrumentationScope: e.scope,
	}
	if s.Parent != "" {
		pid, err := trace.SpanIDFromHex(s.Parent)
		if err != nil {
			return tracetest.SpanStub{}, fmt.Errorf("span %s: parent: %w", s.Name, err)
		}
		st.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: pid, TraceFlags: trace.FlagsSampled})
	}
	for _, ev := range s.Events {
		st.Events = append(st.Events, sdktrace.Event{Name: ev.Name, Time: ev.Time, Attributes: keyValues(ev.Attrs)})
	}
	return st, nil
}

func keyValues(attrs []Attr) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		k := attribute.Key(a.Key)
		switch v := a.Value.(type) {
		case string:
			kv = append(kv, k.String(v))
		case int64:
			kv = append(kv, k.Int64(v))
		case bool:
			kv = append(kv, k.Bool(v))
		case []string:
			kv = append(kv, k.StringSlice(v))
		case []int64:
			kv = append(kv, k.Int64Slice(v))
		default:
			kv = append(kv, k.String(fmt.Sprint(v)))
		}
	}
	return kv
}
