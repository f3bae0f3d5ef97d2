//go:build !linux || !(amd64 || arm64)

package rules

import "io/fs"

func openDirFD(string) (int, bool) { return 0, false }

func closeDirFD(int) {}

func statAt(int, string) (statInfo, bool, error) { return statInfo{}, false, nil }

func lstatAt(int, string) (statInfo, bool, error) { return statInfo{}, false, nil }

func folderIs(string, fs.FileInfo) (same, done bool) { return false, false }
