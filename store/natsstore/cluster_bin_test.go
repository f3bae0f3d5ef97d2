package natsstore

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	routePorts := make([]int, n)
	var routes, hosts []string
	for i := range n {
		c.ports = append(c.ports, freePort(tb))
		routePorts[i] = freePort(tb)
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
	}
	for _, p := range c.ports {
		addr := fmt.Sprintf("127.0.0.1:%d", p)
		for deadline := time.Now().Add(slow); ; time.Sleep(20 * time.Millisecond) {
			if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("nats-server did not listen on %s", addr)
			}
		}
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
