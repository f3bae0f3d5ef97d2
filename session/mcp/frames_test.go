package mcp

import (
	"bytes"
	"strings"
	"testing"
)

// copyFrames hands on each JSON-RPC message as one line and answers every other line with
// one error, whatever comes before or after it.
func TestMCPCopyFrames(t *testing.T) {
	const max = 64
	ok := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tc := range []struct {
		name, in, passed, answered string
	}{
		{"messages", ok + "\n" + ok + "\r\n\n  \n" + ok, ok + "\n" + ok + "\n" + ok + "\n", ""},
		{"not JSON", "nope\n" + ok + "\n",
			ok + "\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the line is not JSON"}}` + "\n"},
		{"cut short", `{"jsonrpc":"2.0","id":1` + "\n" + ok,
			ok + "\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the line is not JSON"}}` + "\n"},
		{"not JSON-RPC", `{"id":"a","method":"ping"}` + "\n" + ok + "\n", ok + "\n", `"id":"a","error":{"code":-32600`},
		{"empty batch", "[]\n" + ok + "\n", ok + "\n", `"id":null,"error":{"code":-32600,"message":"an empty batch"}`},
		{"batch", "[" + ok + "]\n", "[" + ok + "]\n", ""},
		{"an id alone", `{"jsonrpc":"2.0","id":7}` + "\n" + ok + "\n", ok + "\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"not a JSON-RPC 2.0 message: it has an id but neither a method, a result nor an error"}}`},
		{"a response with both", `{"jsonrpc":"2.0","id":"r","result":1,"error":{"code":1}}` + "\n", "", `"id":null,"error":{"code":-32600`},
		{"a response", `{"jsonrpc":"2.0","id":"r","result":null}` + "\n", `{"jsonrpc":"2.0","id":"r","result":null}` + "\n", ""},
		{"a response with a null error", `{"jsonrpc":"2.0","id":"r","result":{},"error":null}` + "\n", `{"jsonrpc":"2.0","id":"r","result":{},"error":null}` + "\n", ""},
		{"an id and a null error", `{"jsonrpc":"2.0","id":"r","error":null}` + "\n", "", `"id":null,"error":{"code":-32600`},
		{"an id alone in a batch", `[` + ok + `,{"jsonrpc":"2.0","id":8}]` + "\n", "", `"id":null,"error":{"code":-32600`},
		{"too long, id first", `{"jsonrpc":"2.0","id":7,"method":"x","params":"` + strings.Repeat("a", 3*max) + "\"}\n" + ok + "\n",
			ok + "\n", `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"the message is longer than the 64 bytes one message may hold; it was discarded"}}` + "\n"},
		{"too long, id after what is kept", `{"jsonrpc":"2.0","params":"` + strings.Repeat("a", idScan) + "\",\"id\":7}\n" + ok,
			ok + "\n", `"id":null,"error":{"code":-32600`},
		{"too long, id within what is kept", `{"jsonrpc":"2.0","params":"` + strings.Repeat("a", 3*max) + "\",\"id\":7}\n" + ok,
			ok + "\n", `"id":7,"error":{"code":-32600`},
		{"too long at the end", ok + "\n" + strings.Repeat("b", 3*max), ok + "\n", `"id":null,"error":{"code":-32600`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var passed, answered bytes.Buffer
			if err := copyFrames(strings.NewReader(tc.in), &passed, &answered, max); err != nil {
				t.Fatal(err)
			}
			if passed.String() != tc.passed {
				t.Errorf("passed on %q, want %q", passed.String(), tc.passed)
			}
			if got := answered.String(); tc.answered == "" && got != "" || !strings.Contains(got, tc.answered) || strings.Count(got, "\n") > 1 {
				t.Errorf("answered %q, want one line with %q", got, tc.answered)
			}
		})
	}
}
