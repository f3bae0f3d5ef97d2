package main

import (
	"os"
	"os/user"
	"runtime"
	"strings"
	"sync"

	"github.com/tasklog/tasklog/events/agentlog"
)

// hostOrigin is the machine and account this process runs on, as task_started records them for
// the tasks it starts: $TASKLOG_MACHINE, else the host name; $TASKLOG_USER, else the account's
// login name ($USER, $USERNAME when the account database does not answer). Read once.
var hostOrigin = sync.OnceValue(func() agentlog.Origin {
	o := agentlog.Origin{OS: runtime.GOOS, Machine: strings.TrimSpace(os.Getenv("TASKLOG_MACHINE")),
		User: strings.TrimSpace(os.Getenv("TASKLOG_USER"))}
	if o.Machine == "" {
		o.Machine, _ = os.Hostname()
	}
	if o.User == "" {
		if u, err := user.Current(); err == nil {
			o.User = u.Username
		}
	}
	for _, v := range []string{"USER", "USERNAME"} {
		if o.User == "" {
			o.User = os.Getenv(v)
		}
	}
	return o
})
