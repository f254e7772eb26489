package bench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestPoissonSchedule(t *testing.T) {
	start := time.Unix(1000, 0)
	const rate, n = 50.0, 20000
	at := poissonSchedule(start, rate, n, rand.New(rand.NewPCG(1, 2)))
	prev := start
	var gaps []float64
	for i, a := range at {
		if !a.After(prev) && !a.Equal(prev) {
			t.Fatalf("arrival %d at %v is before the previous one %v", i, a, prev)
		}
		gaps = append(gaps, a.Sub(prev).Seconds())
		prev = a
	}
	var mean, sq float64
	for _, g := range gaps {
		mean += g
	}
	mean /= n
	for _, g := range gaps {
		sq += (g - mean) * (g - mean)
	}
	sd := math.Sqrt(sq / n)
	// Exponential gaps: mean and standard deviation both 1/rate.
	if want := 1 / rate; math.Abs(mean-want) > 0.05*want || math.Abs(sd-want) > 0.05*want {
		t.Errorf("gaps mean %.5f s, sd %.5f s; want both %.5f s", mean, sd, want)
	}
}

func TestLoadCheck(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   Load
		ok   bool
		conc int
	}{
		{"burst all at once", Load{Turns: 10}, true, 10},
		{"burst bounded", Load{Turns: 10, Concurrency: 3}, true, 3},
		{"poisson", Load{Turns: 10, Arrivals: ArrivalsPoisson, Rate: 2, Concurrency: 4}, true, 0},
		{"poisson without a rate", Load{Turns: 10, Arrivals: ArrivalsPoisson}, false, 0},
		{"unknown arrivals", Load{Turns: 10, Arrivals: "uniform"}, false, 0},
		{"negative warm-up", Load{Turns: 1, Warmup: -time.Second}, false, 0},
		{"no turn", Load{}, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.check()
			if (err == nil) != tt.ok {
				t.Fatalf("check(%+v): error %v, want ok %v", tt.in, err, tt.ok)
			}
			if tt.ok && got.Concurrency != tt.conc {
				t.Errorf("concurrency %d, want %d", got.Concurrency, tt.conc)
			}
		})
	}
}
