package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/harness/faults"
)

func TestPresetConfig(t *testing.T) {
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var given faults.Config
	bindCounts(fs, &given)
	if err := fs.Parse([]string{"--kill-rounds", "3", "--drain-grace", "1s", "--hostile", "0"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := presetConfig(fs, "full")
	if err != nil {
		t.Fatal(err)
	}
	want := faults.Full()
	want.KillRounds, want.DrainGrace, want.Hostile = 3, time.Second, 0
	if cfg.KillRounds != want.KillRounds || cfg.DrainGrace != want.DrainGrace || cfg.Hostile != want.Hostile ||
		cfg.TakeoverRounds != want.TakeoverRounds || cfg.KillSettle != want.KillSettle || cfg.ResumeCycles != want.ResumeCycles {
		t.Errorf("got %+v, want %+v", cfg, want)
	}
	if _, err := presetConfig(fs, "medium"); err == nil {
		t.Error("an unknown preset: no error")
	}
}
