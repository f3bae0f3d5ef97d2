//go:build !linux || !(amd64 || arm64)

package rules

func openDirFD(string) (int, bool) { return 0, false }

func closeDirFD(int) {}

func statAt(int, string) (statInfo, bool, error) { return statInfo{}, false, nil }

func lstatAt(int, string) (statInfo, bool, error) { return statInfo{}, false, nil }

func folderIs(string, uint64, uint64) (same, done bool) { return false, false }
