package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// startMCPProcess starts `replay mcp` (testscript.Main puts this test binary on PATH as replay)
// over the MCP fixture, with limit as the bound on the whole process: a server that hangs fails
// the test. It returns the pipe to its stdin and a scanner of its stdout's lines.
func startMCPProcess(t *testing.T, limit time.Duration) (context.Context, *exec.Cmd, io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	bin, err := exec.LookPath("replay")
	if err != nil {
		t.Fatal(err)
	}
	ws, db := mcpFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, "mcp", "--workspace", ws, "--db", db)
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
	return ctx, cmd, stdin, lines
}

// TestMCPProcess runs `replay mcp` as an agent does, a process speaking JSON-RPC on its stdin and
// stdout, for one initialize and one tools/list exchange; closing stdin ends it with status 0.
func TestMCPProcess(t *testing.T) {
	ctx, cmd, stdin, lines := startMCPProcess(t, 3*time.Minute)
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

// TestMCPProcessBadFrames: a line that is not JSON, one that is JSON but not JSON-RPC and one
// longer than a message may be are each answered with a JSON-RPC error, and the server goes on:
// the requests sent before and after them are answered, and closing stdin still ends it with
// status 0.
func TestMCPProcessBadFrames(t *testing.T) {
	ctx, cmd, stdin, lines := startMCPProcess(t, 3*time.Minute)
	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result map[string]any  `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	// send writes the lines in one write; read takes n replies, in whatever order they come.
	send := func(lines ...string) {
		t.Helper()
		if _, err := io.WriteString(stdin, strings.Join(lines, "\n")+"\n"); err != nil {
			t.Fatalf("write: %v (the server has gone?)", err)
		}
	}
	read := func(n int) map[string]reply {
		t.Helper()
		got := map[string]reply{}
		for range n {
			if !lines.Scan() {
				t.Fatalf("%d replies of %d, then: %v (the server has gone?)", len(got), n, lines.Err())
			}
			var r reply
			if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
				t.Fatalf("reply %s: %v", lines.Bytes(), err)
			}
			if _, dup := got[string(r.ID)]; dup && string(r.ID) != "null" {
				t.Fatalf("two replies for id %s", r.ID)
			}
			got[string(r.ID)] = r
		}
		return got
	}
	wantError := func(got map[string]reply, id string, code int, says string) {
		t.Helper()
		r, ok := got[id]
		if !ok || r.Error == nil || r.Error.Code != code || !strings.Contains(r.Error.Message, says) {
			t.Errorf("reply for id %s: %+v, want error %d saying %q", id, r, code, says)
		}
	}
	wantResult := func(got map[string]reply, id string) {
		t.Helper()
		if r, ok := got[id]; !ok || r.Error != nil || r.Result == nil {
			t.Errorf("reply for id %s: %+v, want a result", id, r)
		}
	}
	tools := `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"exec-test","version":"1"}}}`)
	wantResult(read(1), "1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// A request, then a line that is not JSON in the same write: both answered.
	send(fmt.Sprintf(tools, 2), `this is not a message`)
	got := read(2)
	wantResult(got, "2")
	wantError(got, "null", -32700, "not JSON")
	// A message cut short at its line's end is not JSON either, not the start of a longer one.
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"`, fmt.Sprintf(tools, 4))
	got = read(2)
	wantError(got, "null", -32700, "not JSON")
	wantResult(got, "4")

	// JSON that is not a JSON-RPC message: an invalid request, with its id when it has one.
	send(`{"id":5,"method":"tools/list"}`)
	wantError(read(1), "5", -32600, "not a JSON-RPC 2.0 message")
	send(`{"jsonrpc":"2.0","id":6,"method":"tools/list"} trailing`)
	wantError(read(1), "null", -32700, "not JSON")
	send(fmt.Sprintf(tools, 7))
	wantResult(read(1), "7")
	// An id with neither a method, a result nor an error is no response either.
	send(`{"jsonrpc":"2.0","id":"bare"}`, fmt.Sprintf(tools, 9))
	got = read(2)
	wantError(got, "null", -32600, "neither a method, a result nor an error")
	wantResult(got, "9")

	// A line over 16 MiB: its request's id is answered with an error, the rest is discarded,
	// and the next request is answered.
	long := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"rules_for","arguments":{"paths":["` +
		strings.Repeat("a", 17<<20) + `"]}}}`
	send(long, fmt.Sprintf(tools, 8))
	got = read(2)
	wantError(got, `"big"`, -32600, "longer than the 16 MiB")
	wantResult(got, "8")

	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("replay mcp after stdin closed: %v (timed out: %v)", err, ctx.Err() != nil)
	}
}
