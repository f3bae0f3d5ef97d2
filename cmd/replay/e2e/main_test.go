package e2e

import (
	"os"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Private(m).Run()) }
