//go:build !unix

package check_test

import "errors"

func mkfifo(string) error { return errors.New("FIFOs are a unix feature") }
