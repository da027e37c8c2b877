//go:build !unix

package watcher

import "os"

// openDir opens the directory dir for listing.
func openDir(dir string) (*os.File, error) { return os.Open(dir) }
