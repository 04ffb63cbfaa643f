package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/store"
)

// Like with like: a comparison of two runs says so where a device's fingerprint
// (store.Fingerprint: the device, its driver and runtime, its clock, the host's CPU, the
// environment that changes results and whether its queue was held while timed) differs
// between them, and what differs.

// fingerprintFields are the facts that make up a device's fingerprint, by name.
func fingerprintFields(r *bench.Report, d *bench.DeviceReport) [][2]string {
	in := d.Device
	return [][2]string{
		{"name", in.Name}, {"vendor", in.Vendor}, {"platform", in.Platform}, {"PCI bus ID", in.PCIBusID},
		{"backend", d.Backend}, {"driver", in.DriverVersion}, {"API version", in.APIVersion},
		{"language", in.LanguageVersion}, {"clock MHz", strconv.Itoa(in.ClockMHz)},
		{"compute units", strconv.Itoa(in.ComputeUnits)}, {"host CPU", r.HostCPU},
		{"OS", r.GOOS}, {"architecture", r.GOARCH}, {"queue held while timed", heldFact(d)},
	}
}

// heldFact is the fingerprint's timing fact as compare prints it.
func heldFact(d *bench.DeviceReport) string {
	if store.Held(d) {
		return "yes"
	}
	return "no"
}

// unlikeDevices returns, for each device of both reports (by ID) whose fingerprints
// differ, what differs: "driver: 5.0 -> 6.0" lines, the environment's variables among them.
func unlikeDevices(old, cur *bench.Report) map[string][]string {
	out := map[string][]string{}
	for i := range old.Devices {
		a := &old.Devices[i]
		b := cur.Device(a.Device.ID)
		if b == nil || store.Fingerprint(old, a) == store.Fingerprint(cur, b) {
			continue
		}
		var diff []string
		fa, fb := fingerprintFields(old, a), fingerprintFields(cur, b)
		for j := range fa {
			if fa[j][1] != fb[j][1] {
				diff = append(diff, fmt.Sprintf("%s: %s -> %s", fa[j][0], orUnset(fa[j][1]), orUnset(fb[j][1])))
			}
		}
		keys := map[string]bool{}
		for k := range old.Env {
			keys[k] = true
		}
		for k := range cur.Env {
			keys[k] = true
		}
		var env []string
		for k := range keys {
			env = append(env, k)
		}
		slices.Sort(env)
		for _, k := range env {
			va, oka := old.Env[k]
			vb, okb := cur.Env[k]
			if va != vb || oka != okb {
				diff = append(diff, fmt.Sprintf("%s: %s -> %s", k, envValue(va, oka), envValue(vb, okb)))
			}
		}
		out[a.Device.ID] = diff
	}
	return out
}

func orUnset(v string) string {
	if v == "" || v == "0" {
		return "(unknown)"
	}
	return strconv.Quote(v)
}

func envValue(v string, set bool) string {
	if !set {
		return "(unset)"
	}
	return strconv.Quote(v)
}

// writeUnlikeNote prints, before a comparison, which devices ran on unlike hardware or
// software in the two reports and what differs; nothing when all are alike.
func writeUnlikeNote(w io.Writer, oldName, newName string, old, cur *bench.Report) {
	unlike := unlikeDevices(old, cur)
	for i := range old.Devices {
		id := old.Devices[i].Device.ID
		diff, ok := unlike[id]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "note: %s is not like with like in %s and %s: its results may differ for that alone\n", safeText(id), safeText(oldName), safeText(newName))
		for _, d := range diff {
			fmt.Fprintf(w, "  %s\n", safeText(d))
		}
	}
}
