package main

import "github.com/tasklog/tasklog/store/location"

// The installer names the store the hooks and the MCP server are given with these.

// storeEnv is the environment variable that names the store when no flag does.
const storeEnv = location.Env

// selectStore picks the store from the flags and the environment: see location.Select.
func selectStore(db string, dbSet bool, val string, storeSet bool, useEnv bool) (location.Location, error) {
	return location.Select(db, dbSet, val, storeSet, useEnv)
}

// parseStoreLoc reads a --store value: see location.Parse.
func parseStoreLoc(s string) (location.Location, error) { return location.Parse(s) }

// isNATSURL reports whether s names a store on a server rather than a file.
func isNATSURL(s string) bool { return location.IsURL(s) }

// storeFlagFor is the flag that names the store at path: see location.FlagFor.
func storeFlagFor(path string) string { return location.FlagFor(path) }

// userDataDir is the user's data folder: see location.UserDataDir.
func userDataDir() string { return location.UserDataDir() }
