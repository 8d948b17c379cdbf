package main

import (
	"strings"
	"testing"
)

func TestTBFArgs(t *testing.T) {
	got := strings.Join(tbfArgs("br-bench", 200), " ")
	want := "qdisc replace dev br-bench root tbf rate 200mbit burst 250000 latency 100ms"
	if got != want {
		t.Errorf("tc %s, want tc %s", got, want)
	}
	if got := strings.Join(tbfArgs("br", 1), " "); !strings.Contains(got, "burst 32768") {
		t.Errorf("a slow link still gets a bucket of a few packets: tc %s", got)
	}
}
