package natsstore

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// startServer runs a JetStream server inside the test process, storing in a temporary
// directory and syncing every write (the durable setting a single server needs). It listens on
// no socket: clients reach it through connect. It stops when t ends.
func startServer(t testing.TB) *server.Server {
	t.Helper()
	return startServerIn(t, t.TempDir())
}

// startServerIn is startServer storing in dir.
func startServerIn(t testing.TB, dir string) *server.Server {
	t.Helper()
	return runServer(t, &server.Options{ServerName: "tasklog-test", StoreDir: dir, DontListen: true})
}

// slow bounds what a test waits for (a server to start, a cluster to elect its leaders):
// room for a machine many times slower than usual. A test waits on the condition and meets the
// bound only when it fails.
const slow = time.Minute

// runServer starts a JetStream server of opts, syncing every write, without logs or signal
// handlers, and stops it when t ends.
func runServer(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	opts.JetStream, opts.SyncAlways, opts.NoLog, opts.NoSigs = true, true, true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(slow) {
		t.Fatalf("the NATS server %s did not start", opts.ServerName)
	}
	return s
}

// connect returns a client connection to an in-process server, closed when t ends.
func connect(t testing.TB, s *server.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect("", nats.InProcessServer(s), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

var streams atomic.Int64

// layouts are the layouts a Store reads and writes, for the tests run in each.
var layouts = []int{Layout1, Layout2, Layout3}

// openStore opens a Store on a fresh stream of s, closed when t ends.
func openStore(t testing.TB, s *server.Server, opts *Options) *Store {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Conn == nil {
		o.Conn = connect(t, s)
	}
	url := fmt.Sprintf("nats://in-process/T%d", streams.Add(1))
	st, err := Open(url, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	testServersMu.Lock()
	testServers[st] = s
	testServersMu.Unlock()
	return st
}

// testServers maps the stores openStore returned to their servers.
var (
	testServersMu sync.Mutex
	testServers   = map[*Store]*server.Server{}
)

// freePort returns a TCP port of 127.0.0.1 nothing listens on (at the time of asking).
func freePort(t testing.TB) int { return freePorts(t, 1)[0] }

// freePorts returns n different TCP ports of 127.0.0.1 nothing listens on (at the time of
// asking): each is held until all are chosen, as the system may hand a port it just took back
// again to the next one asking.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}
