package runner

import "time"

// Metrics is what a Runner counts (package internal/metrics implements it
// for Prometheus).
type Metrics interface {
	TurnEnded(status string)
	TokensUsed(input, output int64)
	BatchPersisted(events int, took time.Duration)
	QueueChanged(delta int)
	RunningChanged(delta int)
}

type noMetrics struct{}

func (noMetrics) TurnEnded(string) {}

func (noMetrics) TokensUsed(int64, int64) {}

func (noMetrics) BatchPersisted(int, time.Duration) {}

func (noMetrics) QueueChanged(int) {}

func (noMetrics) RunningChanged(int) {}
