package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// The environment variables Prism reads whose values it could misread: each is checked
// before a command does anything, and a value that is none of those accepted is a usage
// error (exit code 2) naming the variable, where it used to be taken for another value
// (PRISM_TRACE=false turned the trace on; PRISM_DRIVER_STDERR=yes left it off) or
// ignored (PRISM_MAX_WORK_GROUP=lots). Variables that name a device, a path or a store
// (PRISM_DEVICE, PRISM_CACHE_DIR, PRISM_VENDOR_PATH, PRISM_STORE) are checked where they
// are used; the rendezvous variables (PRISM_RENDEZVOUS, PRISM_RANK, PRISM_WORLD_SIZE)
// where a group forms.

// envSwitches are the variables that are on or off, with the values each accepts (unset
// and empty are accepted too).
var envSwitches = []struct {
	name   string
	values []string
}{
	{"PRISM_TRACE", []string{"0", "1"}},
	{"PRISM_DRIVER_STDERR", []string{"0", "1"}},
	{"PRISM_OPENCL_DEFAULTS", []string{"0", "1", "off", "on", "false", "true", "no", "yes"}},
}

// checkEnv returns a usage error naming the first of Prism's variables that holds a
// value it does not accept: PRISM_POOL, PRISM_POOL_LIMIT (engine.CheckEnv),
// PRISM_MAX_WORK_GROUP, PRISM_MAX_LOCAL_MEMORY (kernels.CheckEnv), and envSwitches.
func checkEnv() error {
	if err := engine.CheckEnv(); err != nil {
		return usageError{err}
	}
	if err := kernels.CheckEnv(); err != nil {
		return usageError{err}
	}
	for _, v := range envSwitches {
		val := os.Getenv(v.name)
		if t := strings.ToLower(strings.TrimSpace(val)); t != "" && !slices.Contains(v.values, t) {
			return usageError{fmt.Errorf("%s=%q: want one of %s, or leave it unset", v.name, val, strings.Join(v.values, ", "))}
		}
	}
	return nil
}

// checkEnvFirst is the root's hook before every command but shell completion (whose
// scripts and candidates do not depend on the variables, and which a shell runs with no
// way to show an error).
func checkEnvFirst(cmd *cobra.Command) error {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Name() == "completion" || c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			return nil
		}
	}
	return checkEnv()
}
