package main

import "testing"

func TestFormatRange(t *testing.T) {
	for _, tc := range []struct {
		m    Metric
		vs   []float64
		want string
	}{
		{NsOp, []float64{850, 912}, "850–912 ns"},
		{NsOp, []float64{66_000, 106_400}, "66–106 µs"},
		{NsOp, []float64{9_700, 10_100}, "9.7–10.1 µs"},
		{NsOp, []float64{410_000, 1_100_000}, "0.41–1.1 ms"},
		{NsOp, []float64{1.7e9, 1.93e9}, "1.7–1.93 s"},
		{NsOp, []float64{3e6, 3e6, 3e6}, "3 ms"},
		{P50us, []float64{3150, 3310}, "3.15–3.31 ms"},
		{P50ms, []float64{28.8, 31.5}, "28.8–31.5 ms"},
		{P50ms, []float64{0.1, 0.14}, "100–140 µs"},
		{BOp, []float64{632, 639}, "632–639 B"},
		{BOp, []float64{13_312, 25_700}, "13–25.1 KB"},
		{BOp, []float64{4.6 * (1 << 20)}, "4.6 MB"},
		{BOp.Per(10_000), []float64{6_320_000, 6_390_000}, "632–639 B"},
		{Metric{Unit: "peak-heap-MB", Kind: Bytes, Scale: 1 << 20}, []float64{4.6, 5.9}, "4.6–5.9 MB"},
		{EvS, []float64{3.4e6, 3.5e6}, "3.4–3.5M events/s"},
		{EvS, []float64{318_000, 330_400}, "318–330k events/s"},
		{EvS, []float64{950, 990}, "950–990 events/s"},
		{Metric{Unit: "events/commit", Kind: Number, Label: "events per fsync"}, []float64{7.9, 7.94}, "7.9–7.94 events per fsync"},
		{Metric{Unit: "ratio", Kind: Ratio}, []float64{1.36, 1.0}, "1–1.36×"},
		{NsOp, nil, "no value"},
	} {
		if got := FormatRange(tc.m, tc.vs); got != tc.want {
			t.Errorf("FormatRange(%s, %v) = %q, want %q", tc.m.Unit, tc.vs, got, tc.want)
		}
	}
}
