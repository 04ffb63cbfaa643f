package bench

import "testing"

func TestSizes(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "4096": 4096, "64K": 64 << 10, "16m": 16 << 20, "1G": 1 << 30, "2Ki": 2048, "33000": 33000} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		if back, _ := ParseSize(FormatSize(want)); back != want {
			t.Errorf("FormatSize(%d) = %q does not read back", want, FormatSize(want))
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5M", "K", "12Q", "1I", "99999999G"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for b, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1 << 20: "1 MiB", 64 << 20: "64 MiB", 3 << 29: "1.5 GiB", 80 << 30: "80.0 GiB"} {
		if got := FormatBytes(b); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", b, got, want)
		}
	}
}
