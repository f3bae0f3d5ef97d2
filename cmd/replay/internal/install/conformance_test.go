package install

import (
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/events/agentlog/agenttest"
)

// TestInstallDialects walks every agent install knows through the install round trip of the
// conformance suite, with install records kept (so that uninstall restores what it found).
func TestInstallDialects(t *testing.T) {
	for _, d := range agentlog.Dialects() {
		t.Run(string(d.Agent), func(t *testing.T) {
			records := Records(filepath.Join(t.TempDir(), "records"))
			agenttest.RunInstall(t, d, func(agent, project, home string, user, install bool) ([]string, error) {
				opts := Options{Agent: agent, Project: project, User: user, Exe: testExe, DB: testDB, Home: home, Records: records, Extension: piSource}
				return Run(opts, install)
			})
		})
	}
}
