package bench

import (
	"testing"
	"time"
)

func TestMannWhitneyFunc(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		out := make([]time.Duration, len(vs))
		for i, v := range vs {
			out[i] = time.Duration(v) * time.Microsecond
		}
		return out
	}
	old := ms(100, 101, 102, 103, 104, 105, 106, 107)
	slow := ms(120, 121, 122, 123, 124, 125, 126, 127)
	u := MannWhitney(old, slow, 0.05)
	if u.P > 0.001 || u.N1 != 8 || u.N2 != 8 || u.MinP > 0.05 {
		t.Errorf("disjoint samples: %+v, want p < 0.001 of 8 and 8", u)
	}
	if !(u.RatioLo > 1.1 && u.RatioHi < 1.3 && u.RatioLo < u.RatioHi) {
		t.Errorf("ratio interval [%v, %v], want about 1.19", u.RatioLo, u.RatioHi)
	}
	if u := MannWhitney(old, old, 0.05); u.P < 0.9 {
		t.Errorf("equal samples: p %v, want about 1", u.P)
	}
	if u := MannWhitney(old[:3], slow[:3], 0.05); u.MinP <= 0.05 || u.RatioLo != 0 {
		t.Errorf("3 a side: %+v, want MinP above alpha and no interval", u)
	}
	if u := MannWhitney(nil, slow, 0.05); u.P != 1 || u.N1 != 0 {
		t.Errorf("no old samples: %+v, want p 1", u)
	}
	if UMinSamples(0.05) != 4 {
		t.Errorf("UMinSamples(0.05) = %d, want 4", UMinSamples(0.05))
	}
}
