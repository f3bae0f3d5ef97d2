package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/session/otelexport/otlptest"
)

// TestHookOtelFlags: replay hook takes replay serve's --otel-* flags, for the server it starts;
// a wrong value (a malformed endpoint, an unknown protocol) is an error to log and no flag for
// the server, and the payload is still recorded (TestHookRecordsDespiteWrongValues); an unknown
// flag is refused.
func TestHookOtelFlags(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	tests := []struct {
		args     []string
		wantArgs []string
		err      string
	}{
		{[]string{"claude-code"}, nil, ""},
		{[]string{"claude-code", "--otel-endpoint", "http://127.0.0.1:4318", "--otel-service-name=dev"},
			[]string{"--otel-endpoint", "http://127.0.0.1:4318", "--otel-service-name", "dev"}, ""},
		{[]string{"--otel-protocol", "grpc", "codex", "--otel-log-user-prompts"},
			[]string{"--otel-protocol", "grpc", "--otel-log-user-prompts=true"}, ""},
		{[]string{"claude-code", "--otel-endpoint", "127.0.0.1:4318"}, nil, `OTLP endpoint "127.0.0.1:4318": give a URL such as http://127.0.0.1:4318`},
		{[]string{"claude-code", "--otel-protocol", "thrift"}, nil, `OTLP protocol "thrift"`},
		{[]string{"claude-code", "--otel-log-user-prompts=maybe"}, nil, "is not true or false"},
		{[]string{"claude-code", "--otel-endpoit", "http://x:4318"}, nil, "did you mean --otel-endpoint?"},
	}
	for _, tt := range tests {
		hc, err := parseHookArgs(append(tt.args, "--db", filepath.Join(t.TempDir(), "t.db")), &bytes.Buffer{})
		if tt.err != "" {
			if err == nil && hc.flagErr != nil {
				err = hc.flagErr // a wrong value: logged, and the payload recorded
				if hc.otelArgs != nil {
					t.Errorf("%q: flags for the server %q after a wrong value, want none", tt.args, hc.otelArgs)
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || hc.flagErr != nil {
			t.Errorf("%q: %v %v", tt.args, err, hc.flagErr)
			continue
		}
		if !slices.Equal(hc.otelArgs, tt.wantArgs) {
			t.Errorf("%q: flags for the server %q, want %q", tt.args, hc.otelArgs, tt.wantArgs)
		}
	}
}

// TestHookOtelServerStarted runs the claude-code scenario's hooks as the agent does, with no
// server running: the first hook starts one, which exports to an OTLP receiver, configured by
// the hooks' --otel-endpoint flag or by OTEL_EXPORTER_OTLP_ENDPOINT in their environment. The
// receiver gets the trace 'replay otel export' sends afterwards: every decision, delivery and
// prompt, and the task when the server stops.
func TestHookOtelServerStarted(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	for _, how := range []string{"flag", "environment"} {
		t.Run(how, func(t *testing.T) {
			rcv := otlptest.NewReceiver()
			defer rcv.Close()
			_, home, db, payloads := otelScenario(t)
			env := []string{"HOME=" + home, "TASKLOG_SERVE=on", "TASKLOG_SERVE_IDLE=1m"}
			var flags []string
			if how == "flag" {
				flags = []string{"--otel-endpoint", rcv.URL()}
			} else {
				env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL())
			}
			t.Cleanup(func() { exec.Command(bin, "serve", "--stop", "--db", db).Run() })
			for i, p := range payloads {
				if r := hookProcess(bin, "claude-code", db, p, env, flags...); r.code != 0 || r.stderr != "" {
					t.Fatalf("payload %d: %+v", i+1, r)
				}
			}
			if out, err := exec.Command(bin, "serve", "--stop", "--db", db).CombinedOutput(); err != nil || !strings.Contains(string(out), "stopped the server") {
				t.Fatalf("serve --stop: %v\n%s", err, out)
			}
			want := exportedJSON(t, db)
			got := waitSpans(t, rcv, len(want))
			sameTree(t, got, want, true)
			decides := 0
			for _, s := range got {
				if s.Name == "decide" {
					decides++
				}
			}
			if decides == 0 {
				t.Error("no decide span received")
			}
		})
	}
}

// waitSpans waits until the receiver has n spans (the server sends the task's span as it
// stops), a minute at most, and returns what it has then.
func waitSpans(t *testing.T, rcv *otlptest.Receiver, n int) []otlptest.Span {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(rcv.Spans()) < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return rcv.Spans()
}

// TestHookOtelHungCollector: with a collector that accepts connections and never answers,
// hooks reply and exit 0 with the replies of hooks without export, both through the server the
// first hook starts with --otel-endpoint and without any server ($TASKLOG_SERVE=off,
// OTEL_EXPORTER_OTLP_ENDPOINT set). Without a server the hooks record only: the hook log says so
// once, and 'replay otel export' sends the whole task afterwards.
func TestHookOtelHungCollector(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // the kernel accepts; nothing ever answers
	hung := "http://" + ln.Addr().String()
	hooks := func(serve string, env []string, flags ...string) (replies []string, db string) {
		_, home, db, payloads := otelScenario(t)
		env = append([]string{"HOME=" + home, "TASKLOG_SERVE=" + serve, "TASKLOG_SERVE_IDLE=1m"}, env...)
		t.Cleanup(func() { exec.Command(bin, "serve", "--stop", "--db", db).Run() })
		for i, p := range payloads {
			r := hookProcess(bin, "claude-code", db, p, env, flags...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("TASKLOG_SERVE=%s, payload %d: %+v", serve, i+1, r)
			}
			replies = append(replies, r.stdout)
		}
		return replies, db
	}
	want, _ := hooks("off", nil)
	viaServer, db := hooks("on", nil, "--otel-endpoint", hung)
	if _, err := os.Stat(db + ".otel-noted"); err == nil {
		t.Error("hooks through a server noted that they do not export")
	}
	alone, aloneDB := hooks("off", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + hung})
	for i := range want {
		// The workspace's path differs between the runs; the replies do not otherwise.
		if len(viaServer[i]) != len(want[i]) || len(alone[i]) != len(want[i]) {
			t.Errorf("payload %d: reply %q through the server and %q without one, with a hung collector; %q without export",
				i+1, viaServer[i], alone[i], want[i])
		}
	}
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(aloneDB), hookLogName))
	if n := strings.Count(string(log), "this hook recorded its payload without replay serve"); n != 1 {
		t.Errorf("the hook log notes %d times that hooks without a server do not export, want once:\n%s", n, log)
	}
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"otel", "export", "--db", aloneDB, "--otel-endpoint", rcv.URL(), otelTask}, &out, &errb); code != 0 {
		t.Fatalf("otel export: exit %d: %s", code, errb.String())
	}
	sameTree(t, rcv.Spans(), exportedJSON(t, aloneDB), false)
}
