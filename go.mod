module github.com/prism-compute/prism

go 1.26.8

require (
	github.com/NVIDIA/go-nvml v0.13.0-1
	github.com/jgillich/go-opencl v0.0.0-20180608191952-a0efba3e5257
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
