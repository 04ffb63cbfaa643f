// Package montecarlo holds the montecarlo family of Prism's kernel suite: the
// Philox-4x32-10 counter-based generator (the same bits on every device), uniform and
// normal variates from it, and two Monte Carlo estimates, pi and a European call under
// Black-Scholes (montecarlo.cl).
//
// NewMonteCarlo compiles the family for a device; PhiloxRef and the other references check
// it bit for bit where the device's arithmetic allows; Family lists the ops the suite runs.
package montecarlo
