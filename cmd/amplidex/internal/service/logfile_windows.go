//go:build windows

package service

import (
	"os"

	"golang.org/x/sys/windows"
)

// redirectOutput points the process's standard output and error at f.
func redirectOutput(f *os.File) error {
	h := windows.Handle(f.Fd())
	if err := windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, h); err != nil {
		return err
	}
	if err := windows.SetStdHandle(windows.STD_ERROR_HANDLE, h); err != nil {
		return err
	}
	os.Stdout, os.Stderr = f, f
	return nil
}
