package suite

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CPUSplit is how the CPUs are shared between the suite and the load generator.
type CPUSplit struct {
	Suite, Load []int
}

// SplitCPUs gives the load generator the last quarter of the CPUs this process may use (at
// least one) and the suite the rest. It reports false when there is nothing to split (one
// CPU) or taskset, which pins the suite's processes, is missing.
func SplitCPUs() (CPUSplit, bool) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return CPUSplit{}, false
	}
	var cpus []int
	for i := range 1024 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if _, err := exec.LookPath("taskset"); err != nil || len(cpus) < 2 {
		return CPUSplit{}, false
	}
	load := max(1, len(cpus)/4)
	return CPUSplit{Suite: cpus[:len(cpus)-load], Load: cpus[len(cpus)-load:]}, true
}

// List is a CPU list as taskset takes it.
func List(cpus []int) string {
	parts := make([]string, 0, len(cpus))
	for _, c := range cpus {
		parts = append(parts, strconv.Itoa(c))
	}
	return strings.Join(parts, ",")
}

// PinSelf moves every thread of this process onto cpus and sizes GOMAXPROCS to them; threads
// started later inherit the mask (a second pass catches threads started during the first).
func PinSelf(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	for range 2 {
		if err := pinThreads(&set); err != nil {
			return err
		}
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}

func pinThreads(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) { // ESRCH: the thread ended
			return fmt.Errorf("pin thread %d: %w", tid, err)
		}
	}
	return nil
}
