// Package metrics declares toolmark's Prometheus metrics in one place. Every
// method is safe on a nil *Metrics, so packages record unconditionally.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the collectors of one server.
type Metrics struct {
	registry      *prometheus.Registry
	turns         *prometheus.CounterVec
	activeStreams prometheus.Gauge
	events        prometheus.Counter
	batchLatency  prometheus.Histogram
	queueLength   prometheus.Gauge
	activeTurns   prometheus.Gauge
	tokens        *prometheus.CounterVec
}

// New returns Metrics registered in a registry of their own, with the Go
// runtime and process collectors. The runtime's include the scheduler's
// (go_sched_*): how long goroutines wait, runnable, for a processor, which
// under load is part of every event's delivery.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolmark_turns_total", Help: "Turns that ended, by final status.",
		}, []string{"status"}),
		activeStreams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toolmark_active_streams", Help: "Event streams (SSE) now open.",
		}),
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolmark_events_persisted_total", Help: "Events appended to the event log; rate() gives events/s.",
		}),
		batchLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolmark_persist_batch_seconds",
			Help:    "Time to persist one batch of events (and the content when it is saved).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		queueLength: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toolmark_turn_queue_length", Help: "Turns waiting for a free slot.",
		}),
		activeTurns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toolmark_turns_running", Help: "Turns running on this server.",
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolmark_model_tokens_total", Help: "Tokens of the model calls of ended turns, as the model services reported them, by direction (input, output).",
		}, []string{"direction"}),
	}
	m.registry.MustRegister(m.turns, m.activeStreams, m.events, m.batchLatency, m.queueLength, m.activeTurns, m.tokens,
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// TurnEnded counts a turn that reached the final status s.
func (m *Metrics) TurnEnded(s string) {
	if m != nil {
		m.turns.WithLabelValues(s).Inc()
	}
}

// TokensUsed counts the tokens of an ended turn's model calls.
func (m *Metrics) TokensUsed(input, output int64) {
	if m != nil {
		m.tokens.WithLabelValues("input").Add(float64(input))
		m.tokens.WithLabelValues("output").Add(float64(output))
	}
}

// StreamOpened and StreamClosed track open event streams.
func (m *Metrics) StreamOpened() {
	if m != nil {
		m.activeStreams.Inc()
	}
}

// StreamClosed records that an event stream ended.
func (m *Metrics) StreamClosed() {
	if m != nil {
		m.activeStreams.Dec()
	}
}

// BatchPersisted records one persisted batch of n events that took d.
func (m *Metrics) BatchPersisted(n int, d time.Duration) {
	if m != nil {
		m.events.Add(float64(n))
		m.batchLatency.Observe(d.Seconds())
	}
}

// QueueChanged adds delta to the queue length.
func (m *Metrics) QueueChanged(delta int) {
	if m != nil {
		m.queueLength.Add(float64(delta))
	}
}

// RunningChanged adds delta to the number of running turns.
func (m *Metrics) RunningChanged(delta int) {
	if m != nil {
		m.activeTurns.Add(float64(delta))
	}
}

// HubWrites adds the counters of the hub's writes to parked followers,
// read from stats when scraped: writes of one commit's frames, and
// followers handed back to their goroutine because their socket was full.
func (m *Metrics) HubWrites(stats func() (writes, handedBack int64)) {
	if m == nil {
		return
	}
	m.registry.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolmark_stream_hub_writes_total", Help: "Writes of a commit's events to a parked event stream by the hub's writer.",
		}, func() float64 { w, _ := stats(); return float64(w) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolmark_stream_handed_back_total", Help: "Parked event streams handed back to their goroutine because their socket was full (a slow client).",
		}, func() float64 { _, h := stats(); return float64(h) }),
	)
}
