package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
)

// selectOps returns the ops of the suite that patterns select (names, families, prefixes or
// globs) in the precisions precs (all when none), checking that each of variants (or
// "all") names a variant of one of them: the selection of prism run, bench and tune. Its
// errors are usage errors; flag names the flag of the patterns in them ("--ops"), "" when
// they are the command's arguments.
func selectOps(flag string, patterns, precs, variants []string) ([]kernels.Op, error) {
	ops, err := suite.Match(patterns...)
	if err != nil {
		if flag != "" {
			err = fmt.Errorf("%s: %w", flag, err)
		}
		return nil, usageError{err}
	}
	if ops, err = suite.WithPrecision(ops, precs...); err != nil {
		return nil, usageError{fmt.Errorf("--precision: %w", err)}
	}
	if err := checkVariants(ops, variants); err != nil {
		return nil, err
	}
	return ops, nil
}

// checkVariants refuses a --variant name that none of ops has, a mistake rather than a case
// to skip, with a usage error that lists the variants there are.
func checkVariants(ops []kernels.Op, names []string) error {
	for _, name := range names {
		if strings.EqualFold(name, "all") {
			continue
		}
		var have []string
		found := false
		for _, op := range ops {
			if _, err := op.Variant(name); err == nil {
				found = true
				break
			}
			for _, v := range op.VariantNames() {
				if !slices.Contains(have, v) {
					have = append(have, v)
				}
			}
		}
		if !found {
			list := strings.Join(have, ", ")
			if len(ops) == 1 {
				return usageError{fmt.Errorf("--variant %s: %s has no such variant (it has %s; see prism kernels)", name, ops[0].Name, list)}
			}
			return usageError{fmt.Errorf("--variant %s: none of the %d operations selected has it (they have %s; see prism kernels)", name, len(ops), list)}
		}
	}
	return nil
}
