package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/store/location"
)

// natsNodeConf is the storage page's configuration of node N of a three-node cluster on one
// machine: its client port, its store folder, every write synced, the routes of all three.
const natsNodeConf = `server_name: node%d
listen: 127.0.0.1:%d
jetstream {
  store_dir: "node%d"
  sync_interval: always
}
cluster {
  name: tasklog
  listen: 127.0.0.1:%d
  routes: [%s]
}
`

// okLine is a line of 'replay verify' for a task that verifies.
var okLine = regexp.MustCompile(`(?m)^ok `)

// natsServerBin finds nats-server on PATH or in $(go env GOPATH)/bin; "" when it is in neither.
func natsServerBin() string {
	if bin, err := exec.LookPath("nats-server"); err == nil {
		return bin
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	bin := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "nats-server")
	if _, err := os.Stat(bin); err != nil {
		return ""
	}
	return bin
}

// natsNode is one nats-server process of a cluster started by startNATSCluster.
type natsNode struct {
	name string
	port int
	cmd  *exec.Cmd
	conf string
	dir  string
	log  *os.File
}

// start runs 'nats-server -js -c nodeN.conf' in the cluster's folder and waits until it listens.
func (n *natsNode) start(t *testing.T, bin string) {
	t.Helper()
	n.cmd = exec.Command(bin, "-js", "-c", n.conf)
	n.cmd.Dir = n.dir
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := n.cmd
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", n.port)
	for deadline := time.Now().Add(testenv.ServerWait); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(n.log.Name())
			t.Fatalf("%s did not listen on %s:\n%s", n.name, addr, b)
		}
	}
}

// startNATSCluster starts three nats-server processes on 127.0.0.1 as the storage page says,
// each with its node's configuration file, and returns them with the store URL naming all
// three, without a stream.
func startNATSCluster(t *testing.T, bin string) ([]*natsNode, string) {
	t.Helper()
	dir := t.TempDir()
	var nodes []*natsNode
	var routes, hosts []string
	ports := freePorts(t, 6) // all different: a node given another's port would not start
	routePorts := ports[3:]
	for i := range 3 {
		nodes = append(nodes, &natsNode{name: fmt.Sprintf("node%d", i+1), port: ports[i], dir: dir})
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i]))
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", nodes[i].port))
	}
	for i, n := range nodes {
		n.conf = n.name + ".conf"
		conf := fmt.Sprintf(natsNodeConf, i+1, n.port, i+1, routePorts[i], strings.Join(routes, ", "))
		if err := os.WriteFile(filepath.Join(dir, n.conf), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		if n.log, err = os.Create(filepath.Join(dir, n.name+".log")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.log.Close() })
	}
	for _, n := range nodes {
		n.start(t, bin)
	}
	return nodes, "nats://" + strings.Join(hosts, ",")
}

// untilOK runs a verb until it succeeds (a cluster electing its leaders answers "no
// responders" or "JetStream cluster not available" meanwhile), for at most testenv.ServerWait.
func untilOK(t *testing.T, args ...string) string {
	t.Helper()
	for deadline := time.Now().Add(testenv.ServerWait); ; time.Sleep(200 * time.Millisecond) {
		code, out, stderr := replayHere(args...)
		if code == exitOK {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("replay %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
		}
	}
}

// streamInfo reads a stream's state from the cluster, waiting (at most testenv.ServerWait) while the
// cluster does not answer: a node that just started, or leaders being elected.
func streamInfo(t *testing.T, servers, stream string) *jetstream.StreamInfo {
	t.Helper()
	nc, err := nats.Connect(servers)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(testenv.ServerWait); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var info *jetstream.StreamInfo
		st, err := js.Stream(ctx, stream)
		if err == nil {
			info, err = st.Info(ctx)
		}
		cancel()
		if err == nil && info.Cluster != nil {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream %s: %v", stream, err)
		}
	}
}

// testNATSCluster: three real nats-server processes started with the storage page's
// configuration; a store URL naming all three with ?replicas=3 creates a stream of three
// replicas, which keeps every acknowledged event through a SIGKILL of its leader, takes appends
// while the leader is down, and has the killed node back in sync when it restarts.
func testNATSCluster(t *testing.T) {
	bin := natsServerBin()
	if bin == "" {
		t.Skip("nats-server is not on PATH nor in $(go env GOPATH)/bin (go install github.com/nats-io/nats-server/v2@v2.15.2)")
	}
	nodes, servers := startNATSCluster(t, bin)
	t.Setenv("XDG_DATA_HOME", filepath.Join(t.TempDir(), "data"))
	url := servers + "/TASKLOG?replicas=3"
	t.Setenv(storeEnv, url)
	logs := filepath.Join(testenv.RepoRoot(t), "testdata", "logs")
	untilOK(t, "import", filepath.Join(logs, "monorepo.jsonl"))
	info := streamInfo(t, servers, "TASKLOG")
	if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("the stream's replicas: config %d, cluster %+v; want 3", info.Config.Replicas, info.Cluster)
	}

	// SIGKILL the stream's leader: what was acknowledged is there, and appends go on.
	var leader *natsNode
	for _, n := range nodes {
		if n.name == info.Cluster.Leader {
			leader = n
		}
	}
	if leader == nil {
		t.Fatalf("the stream's leader %q is none of the nodes", info.Cluster.Leader)
	}
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	leader.cmd.Wait()
	untilOK(t, "import", filepath.Join(logs, "multi-root.jsonl"))
	out := untilOK(t, "verify", "--all")
	if n := len(okLine.FindAllString(out, -1)); n != 2 {
		t.Fatalf("verify after the leader was killed: %d tasks ok, want 2:\n%s", n, out)
	}

	// The killed node comes back and catches up: all three replicas current again.
	leader.start(t, bin)
	for deadline := time.Now().Add(testenv.ServerWait); ; time.Sleep(200 * time.Millisecond) {
		info = streamInfo(t, servers, "TASKLOG")
		current := 0
		for _, r := range info.Cluster.Replicas {
			if r.Current {
				current++
			}
		}
		if info.Cluster.Leader != "" && current == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted node did not catch up: %+v", info.Cluster)
		}
	}
	out = untilOK(t, "verify", "--all")
	if len(okLine.FindAllString(out, -1)) != 2 {
		t.Fatalf("verify after the node came back:\n%s", out)
	}
}

// TestNATSClusterHooksLeaderKilled: 32 hook processes at once go through the 'replay serve
// --store' server of a three-node cluster's URL, and the stream's leader is killed (SIGKILL)
// while they run. No hook fails its agent (each exits 0 within its budget), the scoped rule
// reaches the model at most once, and once the next hook has recorded what the others spooled,
// every tool call is in the stream exactly once and verify passes.
func TestNATSClusterHooksLeaderKilled(t *testing.T) {
	bin := natsServerBin()
	if bin == "" {
		t.Skip("nats-server is not on PATH nor in $(go env GOPATH)/bin (go install github.com/nats-io/nats-server/v2@v2.15.2)")
	}
	replay := testenv.ReplayBinary(t)
	ws, home := hookWorkspace(t)
	nodes, servers := startNATSCluster(t, bin)
	url := servers + "/TASKLOG?replicas=3"
	data := filepath.Join(t.TempDir(), "data")
	t.Setenv("XDG_DATA_HOME", data)
	loc, err := location.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	side := loc.SideFile()
	env := []string{"HOME=" + home, "XDG_DATA_HOME=" + data, "XDG_RUNTIME_DIR=" + t.TempDir(), "TASKLOG_SERVE=on", "TASKLOG_SERVE_IDLE=30s", storeEnv + "="}
	t.Cleanup(func() { exec.Command(replay, "serve", "--stop", "--store", url).Run() })
	untilOK(t, "tasks", "--all", "--store", url) // the cluster has elected its leaders
	start := `{"session_id":"s-cluster","cwd":"` + ws + `","hook_event_name":"SessionStart","source":"startup"}`
	if r := natsHookProcess(replay, url, []byte(start), env); r.code != 0 {
		t.Fatalf("SessionStart: %+v", r)
	}
	waitServer(t, side)
	info := streamInfo(t, servers, "TASKLOG")
	var leader *natsNode
	for _, n := range nodes {
		if n.name == info.Cluster.Leader {
			leader = n
		}
	}
	if leader == nil {
		t.Fatalf("the stream's leader %q is none of the nodes", info.Cluster.Leader)
	}

	var wg sync.WaitGroup
	results := make([]hookResult, 32)
	for i := range results {
		id := fmt.Sprintf("toolu_%02d", i)
		payload := fmt.Sprintf(`{"session_id":"s-cluster","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q}`,
			ws, filepath.Join(ws, "src/api/routes.ts"), id)
		wg.Go(func() { results[i] = natsHookProcess(replay, url, []byte(payload), env) })
		if i == 8 {
			leader.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	wg.Wait()
	leader.cmd.Wait()
	delivered := 0
	for i, r := range results {
		if r.code != 0 || r.took > slowBudget+hangLimit {
			t.Errorf("hook %d: exit %d after %v, stderr %q", i, r.code, r.took, r.stderr)
		}
		delivered += strings.Count(r.stdout, "API handlers return JSON errors")
	}
	if delivered > 1 {
		t.Errorf("the scoped rule reached the model %d times, want at most once", delivered)
	}
	checkNATSCallsOnce(t, replay, url, ws, "s-cluster", side, env)
}
