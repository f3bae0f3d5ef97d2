package natsstore

import (
	"fmt"
	"testing"

	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/storetest"
)

// The conformance suite against a JetStream server in the test process, each store on a
// stream of its own, in each layout: a stream written by an earlier version keeps every promise.
func TestConformance(t *testing.T) {
	srv := startServer(t)
	for _, layout := range layouts {
		t.Run(fmt.Sprintf("layout%d", layout), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store { return openStore(t, srv, &Options{layout: layout}) })
		})
	}
}
