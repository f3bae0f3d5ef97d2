// Package otlptest is an OTLP trace receiver for tests, over HTTP (/v1/traces) or gRPC: it
// accepts what an exporter sends and keeps the spans, decoded, for the test to look at.
package otlptest

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is a received span.
type Span struct {
	TraceID, SpanID, Parent, Name string
	Start, End                    time.Time
	// Attrs holds the span's attributes as strings (slices joined with ",").
	Attrs map[string]string
	// Events are the span events' names with their attributes.
	Events []Event
	// Resource holds the resource's attributes.
	Resource map[string]string
}

// Event is a received span event.
type Event struct {
	Name  string
	Time  time.Time
	Attrs map[string]string
}

// Receiver is a running OTLP/HTTP receiver on 127.0.0.1.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	changed  chan struct{}
}

// NewReceiver starts a receiver; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{changed: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the receiver's base URL, the value of OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) URL() string { return r.srv.URL }

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.record(&msg)
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Write(b)
}

// record keeps the spans of an export request.
func (r *Receiver) record(msg *collectortrace.ExportTraceServiceRequest) {
	var got []Span
	for _, rs := range msg.ResourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					Parent: hex.EncodeToString(s.ParentSpanId), Name: s.Name,
					Start: time.Unix(0, int64(s.StartTimeUnixNano)).UTC(), End: time.Unix(0, int64(s.EndTimeUnixNano)).UTC(),
					Attrs: attrs(s.Attributes), Resource: res}
				for _, e := range s.Events {
					sp.Events = append(sp.Events, Event{Name: e.Name, Time: time.Unix(0, int64(e.TimeUnixNano)).UTC(), Attrs: attrs(e.Attributes)})
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.requests++
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// GRPCReceiver is a running OTLP/gRPC receiver on 127.0.0.1.
type GRPCReceiver struct {
	*Receiver
	srv  *grpc.Server
	addr string
}

type traceService struct {
	collectortrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (t traceService) Export(_ context.Context, msg *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	t.r.record(msg)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// NewGRPCReceiver starts an OTLP/gRPC receiver; Close stops it.
func NewGRPCReceiver() (*GRPCReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g := &GRPCReceiver{Receiver: &Receiver{changed: make(chan struct{}, 1)}, srv: grpc.NewServer(), addr: ln.Addr().String()}
	collectortrace.RegisterTraceServiceServer(g.srv, traceService{r: g.Receiver})
	go g.srv.Serve(ln)
	return g, nil
}

// URL is the receiver's address as an endpoint URL (http: no TLS).
func (g *GRPCReceiver) URL() string { return "http://" + g.addr }

// Close stops the receiver.
func (g *GRPCReceiver) Close() { g.srv.Stop() }

// Spans returns the spans received so far, in the order they arrived.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitSpans waits until at least n spans arrived or wait passed, and returns them.
func (r *Receiver) WaitSpans(n int, wait time.Duration) []Span {
	deadline := time.After(wait)
	for {
		if s := r.Spans(); len(s) >= n {
			return s
		}
		select {
		case <-r.changed:
		case <-deadline:
			return r.Spans()
		}
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = value(kv.Value)
	}
	return m
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	case *commonpb.AnyValue_ArrayValue:
		s := ""
		for i, e := range x.ArrayValue.Values {
			if i > 0 {
				s += ","
			}
			s += value(e)
		}
		return s
	}
	return ""
}
