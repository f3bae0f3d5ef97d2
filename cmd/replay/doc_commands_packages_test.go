package main

// The commands the docs show for the packages under session/ and the benchmarks of the hook
// and the decision, and the test that runs each.
func init() {
	for cmd, by := range map[string]string{
		"go test -race -count=1 ./cmd/replay/... ./session/serve/... ./session/mcp/... ./store/natsstore": ".ci/run",
		"go test -run '^$' -bench 'MCP' -benchmem ./session/mcp":                                          "BenchmarkMCPCall",
		"go test -run '^$' -bench '^BenchmarkHook(RoundTrip|InProcess)$' -benchmem ./cmd/replay":          "BenchmarkHookInProcess",
		"go test -run '^$' -bench '^BenchmarkDecide$' -benchmem ./session":                                "BenchmarkDecide",
	} {
		docRunElsewhere[cmd] = by
	}
}
