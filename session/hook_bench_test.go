package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
)

// BenchmarkHookSampleRules is a Claude Code PreToolUse hook handled in the process (Hook: record
// the Read, decide over the samples' 62 rule files, deliver, one commit), on a task of 20
// realistic turns (about 1,700 events; the rule files an hour old), the file read cycling through 50 paths. With -benchmem
// its B/op is what a hook allocates with a workspace of that many rules. Skipped without the
// samples.
func BenchmarkHookSampleRules(b *testing.B) {
	ctx := context.Background()
	ws := sampleRulesWorkspace(b)
	// Rule files written a moment ago are read again at every decision until they are older
	// than the reader's racy window; a workspace's rules are older than that.
	hourAgo := time.Now().Add(-time.Hour)
	backdate := func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(path, hourAgo, hourAgo)
	}
	if err := filepath.WalkDir(ws, backdate); err != nil {
		b.Fatal(err)
	}
	a := openRealisticAgent(b, openDB(b), ws, "hook")
	defer a.Close()
	recordRealisticTurns(b, a, func(i int) bool { return i == 20 })
	hook := func(i int) *agentlog.Hook {
		id := fmt.Sprintf("toolu_bench_%d", i)
		params, _ := json.Marshal(map[string]string{"file_path": fmt.Sprintf("/home/dev/shop/apps/web/src/components/f%d.tsx", i%50)})
		return &agentlog.Hook{Agent: agentlog.ClaudeCode, Event: "PreToolUse", Kind: agentlog.HookPreTool, SessionID: "hook",
			Cwd: "/home/dev/shop", Roots: []string{"/home/dev/shop"}, Channel: events.ChannelTool,
			Records: []agentlog.Record{{Key: "claude-code\x00hook\x00" + id,
				Payload: &events.ToolCall{Tool: "Read", ID: id, Cwd: "/home/dev/shop", Params: params}, Trigger: true}}}
	}
	before := a.Version()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := a.Hook(ctx, hook(i), true); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if got := a.Version() - before; got < uint64(2*b.N) {
		b.Fatalf("%d hooks wrote %d events, want a tool call and a decision each", b.N, got)
	}
}
