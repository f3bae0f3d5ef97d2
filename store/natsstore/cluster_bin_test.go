package natsstore

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
)

// clusterConf is the configuration of one node of a three-node cluster on 127.0.0.1, as the
// storage page shows it: its client port, its store folder, and the routes of all three.
const clusterConf = `server_name: %s
listen: 127.0.0.1:%d
jetstream {
  store_dir: %q
  sync_interval: %s
}
cluster {
  name: tasklog
  listen: 127.0.0.1:%d
  routes: [%s]
}
`

// binaryCluster is a cluster of nats-server processes on 127.0.0.1.
type binaryCluster struct {
	url   string // the store URL's servers, nats://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3
	cmds  []*exec.Cmd
	confs []string
	dirs  []string // the nodes' store folders
	ports []int
}

// startBinaryCluster starts n nats-server processes (bin) routed to each other on 127.0.0.1,
// syncing every write when syncAlways (else every two minutes, the server's default), and
// waits until each accepts connections. They are killed when tb ends.
func startBinaryCluster(tb testing.TB, bin string, n int, syncAlways bool) *binaryCluster {
	tb.Helper()
	dir := tb.TempDir()
	sync := "2m"
	if syncAlways {
		sync = "always"
	}
	c := &binaryCluster{}
	ports := freePorts(tb, 2*n)
	routePorts := ports[n:]
	c.ports = ports[:n:n]
	var routes, hosts []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i]))
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", c.ports[i]))
	}
	c.url = "nats://" + strings.Join(hosts, ",")
	for i := range n {
		name := fmt.Sprintf("node%d", i+1)
		conf := filepath.Join(dir, name+".conf")
		body := fmt.Sprintf(clusterConf, name, c.ports[i], filepath.Join(dir, name), sync, routePorts[i], strings.Join(routes, ", "))
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
		cmd := exec.Command(bin, "-js", "-c", conf)
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		c.cmds = append(c.cmds, cmd)
		c.confs = append(c.confs, conf)
		c.dirs = append(c.dirs, filepath.Join(dir, name))
	}
	for _, p := range c.ports {
		waitListening(tb, p)
	}
	return c
}

// openCluster opens the store at the cluster's URL with stream (which may end in a query) and
// replicas, waiting for the
// cluster to elect its meta leader.
func openCluster(tb testing.TB, c *binaryCluster, stream string, replicas int) *Store {
	tb.Helper()
	sep := "?"
	if strings.Contains(stream, "?") {
		sep = "&"
	}
	url := fmt.Sprintf("%s/%s%sreplicas=%d", c.url, stream, sep, replicas)
	deadline := time.Now().Add(slow)
	for {
		s, err := Open(url, &Options{Timeout: 10 * time.Second})
		if err == nil {
			tb.Cleanup(func() { s.Close() })
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the cluster did not become ready: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Three nats-server processes, a stream of three replicas, and three writer processes appending
// to tasks of their own and to one they share; while they append, a fault: the stream's leader
// killed with SIGKILL (and started again on its disk), the leader stopped with SIGSTOP (cut off
// from the others and the clients, as by a network partition, then let go on), two of the three
// stopped (quorum lost, then regained), a follower killed and started again with an empty disk.
// Every acknowledged event is stored once, in order, each log verifies, and the three replicas
// are current again at the end.
func TestClusterFaultsDuringAppends(t *testing.T) {
	bin := natsServerBinary()
	if bin == "" {
		t.Skip("nats-server is not installed (go install github.com/nats-io/nats-server/v2@v2.15.2)")
	}
	if testing.Short() {
		t.Skip("starts three nats-server processes for each of four faults")
	}
	signal := func(t *testing.T, c *binaryCluster, i int, sig syscall.Signal) {
		if err := c.cmds[i].Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		// fault breaks the cluster while the writers append; the function it returns, run
		// once they are done and before the logs are read, brings it back.
		fault func(t *testing.T, c *binaryCluster, check *Store) (heal func())
	}{
		{"leader SIGKILL", func(t *testing.T, c *binaryCluster, check *Store) func() {
			i := c.leaderIndex(t, check)
			signal(t, c, i, syscall.SIGKILL)
			c.cmds[i].Wait()
			return func() { c.restart(t, bin, i) }
		}},
		{"leader SIGSTOP", func(t *testing.T, c *binaryCluster, check *Store) func() {
			i := c.leaderIndex(t, check)
			signal(t, c, i, syscall.SIGSTOP)
			return func() { signal(t, c, i, syscall.SIGCONT) }
		}},
		{"quorum lost", func(t *testing.T, c *binaryCluster, check *Store) func() {
			i := c.leaderIndex(t, check)
			j := (i + 1) % len(c.cmds)
			signal(t, c, i, syscall.SIGSTOP)
			signal(t, c, j, syscall.SIGSTOP)
			// The remaining node alone answers no append: wait until a store on it says so.
			for deadline := time.Now().Add(slow); ; {
				only := fmt.Sprintf("nats://127.0.0.1:%d/KILL", c.ports[3-i-j])
				s, err := Open(only, &Options{Timeout: time.Second})
				if err == nil {
					_, err = s.Append(context.Background(), uuid.New(), 0, note(t, 1, "alone"))
					s.Close()
				}
				if err != nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("one node of three still takes appends")
				}
			}
			signal(t, c, i, syscall.SIGCONT)
			signal(t, c, j, syscall.SIGCONT)
			return func() {}
		}},
		{"follower back with an empty disk", func(t *testing.T, c *binaryCluster, check *Store) func() {
			i := (c.leaderIndex(t, check) + 1) % len(c.cmds)
			signal(t, c, i, syscall.SIGKILL)
			c.cmds[i].Wait()
			if err := os.RemoveAll(c.dirs[i]); err != nil {
				t.Fatal(err)
			}
			c.restart(t, bin, i)
			return func() {}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startBinaryCluster(t, bin, 3, true)
			check := openCluster(t, c, "KILL", 3)
			url := c.url + "/KILL?replicas=3"
			const procs, n = 3, 150
			processesAppend(t, url, check, procs, n, func(shared uuid.UUID, own []uuid.UUID) func() {
				// Once every writer is under way (its own task holds some events), the fault.
				for _, task := range own {
					for deadline := time.Now().Add(slow); ; time.Sleep(10 * time.Millisecond) {
						if h, err := check.Head(task); err == nil && h.Seq >= 5 {
							break
						}
						if time.Now().After(deadline) {
							t.Fatal("the writers did not append")
						}
					}
				}
				h, _ := check.Head(shared)
				heal := tc.fault(t, c, check)
				t.Logf("%s with the shared task at %d of its %d events", tc.name, h.Seq, procs*n)
				// Before the logs are read: a server that was cut off and comes back may
				// answer as the leader it was, from its stale state, until it learns of the
				// new one; the reads wait until all three replicas are current again.
				return func() { heal(); c.waitCurrent(t, check) }
			})
		})
	}
}

// waitCurrent waits until s's stream has a leader and both its other replicas are current.
func (c *binaryCluster) waitCurrent(t *testing.T, s *Store) {
	t.Helper()
	for deadline := time.Now().Add(slow); ; time.Sleep(100 * time.Millisecond) {
		info, err := s.js.Stream(context.Background(), s.stream)
		cur := 0
		if err == nil && info.CachedInfo().Cluster != nil {
			for _, r := range info.CachedInfo().Cluster.Replicas {
				if r.Current {
					cur++
				}
			}
		}
		if cur == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replicas are not current again: %v", err)
		}
	}
}

// leaderIndex returns the index of the node leading s's stream.
func (c *binaryCluster) leaderIndex(t *testing.T, s *Store) int {
	t.Helper()
	for deadline := time.Now().Add(slow); ; time.Sleep(50 * time.Millisecond) {
		info, err := s.js.Stream(context.Background(), s.stream)
		if err == nil && info.CachedInfo().Cluster != nil {
			var i int
			if _, err := fmt.Sscanf(info.CachedInfo().Cluster.Leader, "node%d", &i); err == nil && i >= 1 && i <= len(c.cmds) {
				return i - 1
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream has no leader: %v", err)
		}
	}
}

// restart starts node i again with its configuration and disk, and waits until it listens.
func (c *binaryCluster) restart(t *testing.T, bin string, i int) {
	t.Helper()
	cmd := exec.Command(bin, "-js", "-c", c.confs[i])
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c.cmds[i] = cmd
	waitListening(t, c.ports[i])
}

// waitListening waits until something accepts connections on 127.0.0.1:port.
func waitListening(tb testing.TB, port int) {
	tb.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(slow); ; time.Sleep(20 * time.Millisecond) {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("nats-server did not listen on %s", addr)
		}
	}
}
