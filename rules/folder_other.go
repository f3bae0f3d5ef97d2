//go:build !unix

package rules

import "io/fs"

// sysFolderID: no inodes here; folders are known by their resolved path.
func sysFolderID(fs.FileInfo) (folderID, bool) { return folderID{}, false }
