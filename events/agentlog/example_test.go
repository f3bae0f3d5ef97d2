package agentlog_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tasklog/tasklog/events/agentlog"
)

func ExampleImport() {
	dir, _ := os.MkdirTemp("", "agentlog")
	defer os.RemoveAll(dir)
	session := filepath.Join(dir, "session.jsonl")
	os.WriteFile(session, []byte(`{"type":"session","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/Users/me/proj"}
{"type":"message","message":{"role":"user","content":"fix @src/a.ts"}}
{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"edit","arguments":{"path":"src/a.ts","oldText":"a","newText":"b"}}]}}
{"type":"message","message":{"role":"toolResult","toolCallId":"c1","isError":false}}
`), 0o644)

	rep, err := agentlog.Import(agentlog.Pi, session, agentlog.Options{}, func(it agentlog.Item) error {
		if it.Turn {
			fmt.Println("-- turn: record a decision here")
			return nil
		}
		fmt.Printf("%s %s\n", it.Event.Type, it.Event.Data)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Records, "records,", rep.Turns, "turn,", rep.Paths, "paths")
	// Output:
	// task_started {"roots":["/Users/me/proj"],"runtime":{"name":"pi"}}
	// user_message {"text":"fix @src/a.ts"}
	// mention {"path":"src/a.ts","resolved":"/Users/me/proj/src/a.ts"}
	// -- turn: record a decision here
	// tool_call {"tool":"edit","id":"c1","params":{"newText":"b","oldText":"a","path":"src/a.ts"}}
	// file_write {"path":"/Users/me/proj/src/a.ts","op":"edit"}
	// 4 records, 1 turn, 2 paths
}
