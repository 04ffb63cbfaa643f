//go:build !noopencl

package cl

import (
	"encoding/binary"
	"fmt"
)

// pciBusID returns the device's PCI address as "domain:bus:device.function"
// ("0000:17:00.0"), the form CUDA and NVML use, or "" when the driver does not report it.
// It tries, in order, the Khronos extension cl_khr_pci_bus_info, NVIDIA's
// cl_nv_device_attribute_query and AMD's cl_amd_device_attribute_query; a query that
// fails leaves the next one to try.
func pciBusID(q infoQuery, exts map[string]bool) string {
	if exts["cl_khr_pci_bus_info"] {
		if b, err := q(paramPCIBusInfoKHR); err == nil {
			if id, ok := decodePCIBusInfoKHR(b); ok {
				return id
			}
		}
	}
	if exts["cl_nv_device_attribute_query"] {
		bus, errBus := queryUint(q, paramPCIBusIDNV)
		slot, errSlot := queryUint(q, paramPCISlotIDNV)
		if errBus == nil && errSlot == nil {
			domain, err := queryUint(q, paramPCIDomainIDNV) // absent on older drivers
			if err != nil {
				domain = 0
			}
			return formatPCI(domain, bus, slot>>3, slot&7)
		}
	}
	if exts["cl_amd_device_attribute_query"] {
		if b, err := q(paramTopologyAMD); err == nil {
			if id, ok := decodeTopologyAMD(b); ok {
				return id
			}
		}
	}
	return ""
}

// decodePCIBusInfoKHR decodes cl_device_pci_bus_info_khr: four cl_uint, domain, bus,
// device, function.
func decodePCIBusInfoKHR(b []byte) (string, bool) {
	if len(b) < 16 {
		return "", false
	}
	u := func(i int) uint32 { return binary.NativeEndian.Uint32(b[4*i:]) }
	return formatPCI(u(0), u(1), u(2), u(3)), true
}

// decodeTopologyAMD decodes cl_device_topology_amd, a 24-byte union whose PCIe view is
// { cl_uint type; cl_char unused[17]; cl_char bus, device, function; } with type 1
// (CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD). AMD reports no domain: it is taken as 0.
func decodeTopologyAMD(b []byte) (string, bool) {
	const typePCIe = 1
	if len(b) < 24 || binary.NativeEndian.Uint32(b) != typePCIe {
		return "", false
	}
	return formatPCI(0, uint32(b[21]), uint32(b[22]), uint32(b[23])), true
}

func formatPCI(domain, bus, dev, fn uint32) string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", domain, bus, dev, fn)
}
