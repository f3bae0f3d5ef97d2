package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestMCPProcess runs `replay mcp` as an agent does, a process speaking JSON-RPC on its stdin and
// stdout, for one initialize and one tools/list exchange; closing stdin ends it with status 0.
func TestMCPProcess(t *testing.T) {
	bin, err := exec.LookPath("replay") // testscript.Main puts this test binary on PATH as replay
	if err != nil {
		t.Fatal(err)
	}
	f := mcpFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "--workspace", f.ws, "--db", f.db)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	exchange := func(req string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, req+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s: %v", req, lines.Err())
		}
		var resp struct {
			ID     int            `json:"id"`
			Result map[string]any `json:"result"`
			Error  any            `json:"error"`
		}
		if err := json.Unmarshal(lines.Bytes(), &resp); err != nil || resp.Error != nil || resp.Result == nil {
			t.Fatalf("answer to %s: %s (%v)", req, lines.Bytes(), err)
		}
		return resp.Result
	}

	init := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"exec-test","version":"1"}}}`)
	info, _ := init["serverInfo"].(map[string]any)
	caps, _ := init["capabilities"].(map[string]any)
	if info["name"] != "tasklog" || init["protocolVersion"] != "2025-06-18" || caps["tools"] == nil || caps["resources"] == nil {
		t.Errorf("initialize: %v", init)
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	list := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	tools, _ := list["tools"].([]any)
	var names []string
	for _, tool := range tools {
		m, _ := tool.(map[string]any)
		if m["inputSchema"] == nil {
			t.Errorf("tool %v has no input schema", m["name"])
		}
		names = append(names, m["name"].(string))
	}
	if want := []string{"audit", "explain", "rules_for", "timeline", "whatif", "why"}; !slices.Equal(names, want) {
		t.Errorf("tools/list: %q, want %q", names, want)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("replay mcp after stdin closed: %v (timed out: %v)", err, ctx.Err() != nil)
	}
}
