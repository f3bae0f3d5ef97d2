package main

import (
	"fmt"
	"runtime/debug"
)

// collectorDefault sets the garbage collector to percent (debug.SetGCPercent) unless $GOGC
// chose a setting, and says which it runs at, for a log: whose names the command whose
// default percent is.
func collectorDefault(getenv func(string) string, percent int, whose string) string {
	if v := getenv("GOGC"); v != "" {
		return fmt.Sprintf("garbage collector: GOGC=%s, from the environment", v)
	}
	debug.SetGCPercent(percent)
	return fmt.Sprintf("garbage collector: GOGC=%d, %s default (set GOGC to choose another)", percent, whose)
}
