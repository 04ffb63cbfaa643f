package main

import (
	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "prism",
		Short: "Run one suite of compute kernels on every GPU and CPU of this machine",
		Long: `Prism runs one suite of compute kernels (stream, and more to come) on any device
that speaks OpenCL (NVIDIA, AMD and Intel GPUs; CPUs through PoCL) and, on NVIDIA GPUs,
through CUDA. It finds the devices at run time, verifies every result against a float64
reference, and times kernels with device events.

Choosing a device: --device takes an ID from 'prism devices' (opencl:0:0, cuda:0), a
backend (opencl, cuda) or a class (gpu, accelerator, cpu). Without it, the environment
variable PRISM_DEVICE is used, and without that the best device by policy: GPU before
accelerator before CPU, CUDA before OpenCL for the same card, then the larger peak.
PRISM_TRACE=1 prints what was chosen and why.

Exit codes: 0 success, 1 error, 2 bad usage, 3 no device or backend available,
4 a result failed verification.`,
		Example: `  prism devices                 # list every device of every backend
  prism devices --json          # the same as JSON, with every fact
  prism bench                   # stream kernels on every device, verified, GB/s side by side
  prism bench --device cpu --size 1000000 --count 5
  PRISM_DEVICE=opencl:0:0 prism bench --device ""`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(newDevicesCmd(), newBenchCmd(), newRunCmd(), newKernelsCmd())
	return root
}
