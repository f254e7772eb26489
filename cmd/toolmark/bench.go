package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// runBench is the load tool: it runs a bounded number of turns against a
// server, each followed by several streams, and reports throughput and
// latencies. It sends traffic only to --server.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("toolmark bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", envOr("TOOLMARK_SERVER", "http://127.0.0.1:8080"), "server URL")
	token := fs.String("token", os.Getenv("TOOLMARK_TOKEN"), "API token for --auth token servers")
	turns := fs.Int("turns", 40, "turns to run in all")
	conc := fs.Int("concurrency", 4, "turns in flight at once")
	followers := fs.Int("followers", 2, "event streams per turn")
	question := fs.String("question", "How does resume work, and what happens on cancellation?", "the message of every turn")
	timeout := fs.Duration("timeout", 5*time.Minute, "stop after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *turns < 1 || *conc < 1 || *followers < 1 {
		return errors.New("--turns, --concurrency and --followers must be at least 1")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var opts []client.Option
	if *token != "" {
		opts = append(opts, client.WithToken(*token))
	}
	c := client.New(*server, opts...)
	info, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("reaching %s: %w", *server, err)
	}
	fmt.Fprintf(stderr, "bench: %d turns, %d at once, %d streams each, against %s (model %s)\n", *turns, *conc, *followers, *server, info.Model)

	var (
		mu                      sync.Mutex
		firstEvent, turnTime    []time.Duration
		delivery                []time.Duration
		events, failed, started atomic.Int64
		done                    atomic.Int64
	)
	sem := make(chan struct{}, *conc)
	var wg sync.WaitGroup
	begin := time.Now()
	for i := 0; i < *turns && ctx.Err() == nil; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			conv, err := c.CreateConversation(ctx, "bench")
			if err != nil {
				failed.Add(1)
				return
			}
			t0 := time.Now()
			ti, err := c.PostTurn(ctx, conv.ID, *question, "")
			if err != nil {
				failed.Add(1)
				return
			}
			started.Add(1)
			var fwg sync.WaitGroup
			for f := 0; f < *followers; f++ {
				fwg.Add(1)
				go func(first bool) {
					defer fwg.Done()
					var lat []time.Duration
					seen := false
					err := c.Follow(ctx, ti.Turn.ID, 0, func(e toolmark.Event) error {
						now := time.Now()
						if first && !seen {
							seen = true
							mu.Lock()
							firstEvent = append(firstEvent, now.Sub(t0))
							mu.Unlock()
						}
						lat = append(lat, now.Sub(e.Time))
						events.Add(1)
						if first && e.Type.Terminal() {
							mu.Lock()
							turnTime = append(turnTime, now.Sub(t0))
							mu.Unlock()
						}
						return nil
					})
					if err != nil && ctx.Err() == nil {
						failed.Add(1)
					}
					mu.Lock()
					delivery = append(delivery, lat...)
					mu.Unlock()
				}(f == 0)
			}
			fwg.Wait()
			if n := done.Add(1); n%int64(max(1, *turns/10)) == 0 || int(n) == *turns {
				fmt.Fprintf(stderr, "bench: %d/%d turns done, %d events delivered, %.1fs\n", n, *turns, events.Load(), time.Since(begin).Seconds())
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	fmt.Fprintf(stdout, "turns        %d completed, %d failed, in %.2fs (%.2f turns/s)\n", len(turnTime), failed.Load(), elapsed.Seconds(), float64(len(turnTime))/elapsed.Seconds())
	fmt.Fprintf(stdout, "events       %d delivered over %d streams (%.0f events/s)\n", events.Load(), started.Load()*int64(*followers), float64(events.Load())/elapsed.Seconds())
	fmt.Fprintf(stdout, "first event  %s\n", percentiles(firstEvent))
	fmt.Fprintf(stdout, "whole turn   %s\n", percentiles(turnTime))
	fmt.Fprintf(stdout, "delivery     %s  (event time to receipt, persistence included)\n", percentiles(delivery))
	if ctx.Err() != nil {
		return fmt.Errorf("stopped after --timeout %s", *timeout)
	}
	if failed.Load() > 0 {
		return fmt.Errorf("%d requests or streams failed", failed.Load())
	}
	return nil
}

// percentiles formats p50, p95 and p99 of ds.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n/a"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	p := func(q float64) time.Duration {
		return s[min(len(s)-1, int(q*float64(len(s))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("p50 %v  p95 %v  p99 %v  (n=%d)", p(0.50), p(0.95), p(0.99), len(s))
}
