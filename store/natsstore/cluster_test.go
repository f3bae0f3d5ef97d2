package natsstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// startCluster runs n JetStream servers routed to each other on 127.0.0.1, on free ports,
// and returns them with the client URL of all of them. They stop when t ends.
func startCluster(t *testing.T, n int) ([]*server.Server, string) {
	t.Helper()
	ports := freePorts(t, 2*n)
	clientPorts, routePorts := ports[:n], ports[n:]
	var routes, clients []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i]))
		clients = append(clients, fmt.Sprintf("nats://127.0.0.1:%d", clientPorts[i]))
	}
	servers := make([]*server.Server, n)
	for i := range n {
		s, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("node%d", i+1),
			Host:       "127.0.0.1",
			Port:       clientPorts[i],
			JetStream:  true,
			StoreDir:   t.TempDir(),
			Cluster:    server.ClusterOpts{Name: "tasklog", Host: "127.0.0.1", Port: routePorts[i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
			NoLog:      true,
			NoSigs:     true,
		})
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		servers[i] = s
		t.Cleanup(func() {
			s.Shutdown()
			s.WaitForShutdown()
		})
	}
	for _, s := range servers {
		if !s.ReadyForConnections(slow) {
			t.Fatal("a cluster node did not start")
		}
	}
	return servers, strings.Join(clients, ",")
}

// connectCluster connects to any node of the cluster, reconnecting to another when one stops.
func connectCluster(t *testing.T, urls string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// openWhenReady opens the store, waiting for the cluster to elect its leaders.
func openWhenReady(t *testing.T, url string, o *Options) *Store {
	t.Helper()
	deadline := time.Now().Add(slow)
	for {
		s, err := Open(url, o)
		if err == nil {
			t.Cleanup(func() { s.Close() })
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster did not become ready: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// acks records the events the store acknowledged, per task.
type acks struct {
	mu   sync.Mutex
	seqs map[uuid.UUID]map[uint64]events.Event
}

func (a *acks) add(t *testing.T, task uuid.UUID, stored []events.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seqs[task] == nil {
		a.seqs[task] = map[uint64]events.Event{}
	}
	for _, ev := range stored {
		if old, ok := a.seqs[task][ev.Seq]; ok && old.ID != ev.ID {
			t.Errorf("task %s seq %d acknowledged as event %s and as event %s", task, ev.Seq, old.ID, ev.ID)
		}
		a.seqs[task][ev.Seq] = ev
	}
}

// appendUntilAcked appends evs after the writer's known head until the store acknowledges
// them: a conflict re-reads the head (another writer was first), any other error (a leader
// being elected, a connection moving to another node) retries the same append, which is safe
// because appends are idempotent by event id.
func appendUntilAcked(ctx context.Context, s *Store, task uuid.UUID, expected *uint64, evs []events.Event, conflicts *atomic.Int64) (store.Appended, error) {
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		a, err := s.Append(ctx, task, *expected, evs...)
		if err == nil {
			*expected = max(*expected, a.Last)
			return a, nil
		}
		lastErr = err
		if errors.Is(err, store.ErrVersionConflict) {
			conflicts.Add(1)
			var vc *store.VersionConflictError
			errors.As(err, &vc)
			*expected = vc.Actual
			continue
		}
		if errors.Is(err, store.ErrDuplicateID) || errors.Is(err, store.ErrCorrupt) {
			return store.Appended{}, err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return store.Appended{}, fmt.Errorf("not acknowledged within a minute: %w", lastErr)
}

// With the stream replicated on three nodes, stopping its leader while several writers append
// loses nothing acknowledged: every acknowledged event is in the log once, in order, and the
// chain verifies.
func TestClusterLeaderStops(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster: not in -short")
	}
	servers, urls := startCluster(t, 3)
	s := openWhenReady(t, "nats://127.0.0.1:1/R3", &Options{Replicas: 3, Timeout: 2 * time.Second, Conn: connectCluster(t, urls)})
	info, err := s.js.Stream(context.Background(), s.stream)
	if err != nil {
		t.Fatal(err)
	}
	if r := info.CachedInfo().Config.Replicas; r != 3 {
		t.Fatalf("the stream has %d replicas, want 3", r)
	}

	const ownWriters, sharedWriters, perWriter = 4, 3, 30
	shared := uuid.New()
	got := &acks{seqs: map[uuid.UUID]map[uint64]events.Event{}}
	var conflicts, acked atomic.Int64
	var wg sync.WaitGroup
	// The writers go past a third of their appends only once the leader is stopped, so that
	// it stops while they append however fast they are.
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	defer open()
	writer := func(w int, task uuid.UUID) {
		// Each writer has its own connection, as the hooks of different machines do.
		ws := openWhenReady(t, "nats://127.0.0.1:1/R3", &Options{Timeout: 2 * time.Second, Conn: connectCluster(t, urls)})
		var expected uint64
		for i := range perWriter {
			if i == perWriter/3 {
				<-gate
			}
			batch := []events.Event{note(t, i+1, fmt.Sprintf("writer %d event %d", w, i))}
			if i%5 == 4 {
				batch = append(batch, note(t, i+1, fmt.Sprintf("writer %d event %d, second of a batch", w, i)))
			}
			a, err := appendUntilAcked(context.Background(), ws, task, &expected, batch, &conflicts)
			if err != nil {
				t.Errorf("writer %d: %v", w, err)
				return
			}
			got.add(t, task, a.Events)
			acked.Add(1)
		}
	}
	tasks := []uuid.UUID{shared}
	for w := range ownWriters {
		task := uuid.New()
		tasks = append(tasks, task)
		wg.Go(func() { writer(w, task) })
	}
	for w := range sharedWriters {
		wg.Go(func() { writer(ownWriters+w, shared) })
	}

	// Stop the stream's leader once the writers are under way.
	for acked.Load() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	info, err = s.js.Stream(context.Background(), s.stream)
	if err != nil {
		t.Fatal(err)
	}
	leader := info.CachedInfo().Cluster.Leader
	stopped := false
	for _, srv := range servers {
		if srv.Name() == leader {
			srv.Shutdown()
			stopped = true
		}
	}
	if !stopped {
		t.Fatalf("no node is the stream leader %q", leader)
	}
	ackedAtStop := acked.Load()
	open()
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("leader %s stopped after %d acknowledged appends; %d conflicts on the shared task", leader, ackedAtStop, conflicts.Load())
	if ackedAtStop >= (ownWriters+sharedWriters)*perWriter {
		t.Fatal("every append was acknowledged before the leader stopped")
	}

	check := openWhenReady(t, "nats://127.0.0.1:1/R3", &Options{Timeout: 5 * time.Second, Conn: connectCluster(t, urls)})
	for _, task := range tasks {
		want := got.seqs[task]
		seen := map[string]bool{}
		n := uint64(0)
		for ev, err := range check.Events(context.Background(), task, 1) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if seen[ev.ID.String()] {
				t.Errorf("task %s: event %s stored twice", task, ev.ID)
			}
			seen[ev.ID.String()] = true
			if w, ok := want[ev.Seq]; ok && (w.ID != ev.ID || w.Hash != ev.Hash) {
				t.Errorf("task %s seq %d: stored event %s, acknowledged %s", task, ev.Seq, ev.ID, w.ID)
			}
		}
		if n != uint64(len(want)) {
			t.Errorf("task %s: %d events stored, %d acknowledged", task, n, len(want))
		}
		for seq := range want {
			if seq > n {
				t.Errorf("task %s: acknowledged seq %d is missing", task, seq)
			}
		}
		if err := check.Verify(context.Background(), task); err != nil {
			t.Errorf("task %s: %v", task, err)
		}
	}
}
