package natsstore

import (
	"testing"

	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/storetest"
)

// The conformance suite against a JetStream server in the test process, each store on a
// stream of its own.
func TestConformance(t *testing.T) {
	srv := startServer(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openStore(t, srv, nil) })
}
