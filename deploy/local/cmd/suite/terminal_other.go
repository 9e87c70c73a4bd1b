//go:build !unix

package main

// foreground does nothing where there are no process groups.
func foreground() (restore func()) { return func() {} }
