package agentlog

import (
	"reflect"
	"testing"

	"github.com/tasklog/tasklog/events"
)

// TestClineWrites checks that the hook names the files of Cline's path tools with the operation
// the api history import gives them.
func TestClineWrites(t *testing.T) {
	const cwd = "/work/app"
	tests := []struct {
		name, tool string
		input      map[string]any
		result     string
		want       []events.FileWrite
	}{
		{"write", "write_to_file", map[string]any{"path": "a.ts"}, "", []events.FileWrite{{Path: "/work/app/a.ts", Op: events.OpCreate}}},
		{"replace", "replace_in_file", map[string]any{"path": "b.ts"}, "", []events.FileWrite{{Path: "/work/app/b.ts", Op: events.OpEdit}}},
		{"new rule", "new_rule", map[string]any{"path": ".clinerules/c.md"}, "", []events.FileWrite{{Path: "/work/app/.clinerules/c.md", Op: events.OpCreate}}},
		{"delete", "delete_file", map[string]any{"path": "d.ts"}, "", []events.FileWrite{{Path: "/work/app/d.ts", Op: events.OpDelete}}},
		{"sdk editor create", "editor", map[string]any{"path": "e.ts"}, "File created", []events.FileWrite{{Path: "/work/app/e.ts", Op: events.OpCreate}}},
		{"no path", "write_to_file", map[string]any{}, "", nil},
		{"read only", "read_file", map[string]any{"path": "f.ts"}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clineWrites(tt.tool, tt.input, tt.result, cwd)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("clineWrites(%s) = %+v, want %+v", tt.tool, got, tt.want)
			}
		})
	}
}
