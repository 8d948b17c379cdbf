package main

import (
	"slices"
	"testing"
)

func TestParseCounts(t *testing.T) {
	for in, want := range map[string][]int{
		"10":          {10},
		"2,10,20":     {2, 10, 20},
		" 20, 2 ,10,": {2, 10, 20},
		"10,2,10":     {2, 10},
	} {
		got, err := parseCounts(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseCounts(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", ",", "1", "2,x", "-3", "2.5"} {
		if got, err := parseCounts(in); err == nil {
			t.Errorf("parseCounts(%q) = %v, want an error", in, got)
		}
	}
}
