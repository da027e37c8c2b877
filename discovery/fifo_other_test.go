//go:build !unix

package discovery_test

import "errors"

func mkfifo(string) error { return errors.New("FIFOs are a unix feature") }
