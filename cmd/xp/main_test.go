package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDoctorReportsTorch(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"doctor"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go:", "gotch:", "libtorch:", "BLAS:", "CUDA available:", "threads:", "exact search:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSmokeCommand(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"smoke", "-steps", "60"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "training accuracy") {
		t.Errorf("smoke output:\n%s", out.String())
	}
}

func TestBadInput(t *testing.T) {
	for _, args := range [][]string{nil, {"nope"}, {"smoke", "-device", "tpu"}, {"smoke", "-bogus"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("xp %v: no error", args)
		}
	}
}
