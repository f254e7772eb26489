package bench

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot writes the sweep's latency against concurrent turns as a PNG file.
func (s *SweepReport) Plot(path string) error {
	var buf bytes.Buffer
	if err := s.WritePlot(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// WritePlot draws delivery, first-event and first-token latency (p50, p95, p99, in
// milliseconds, log scale) against concurrent turns (log scale) and writes
// it as PNG to w.
func (s *SweepReport) WritePlot(w io.Writer) error {
	if len(s.Steps) == 0 {
		return errors.New("no step to plot")
	}
	p := plot.New()
	p.Title.Text = "Latency against concurrent turns"
	if d := s.Steps[0].Demo; d != nil {
		p.Title.Text += fmt.Sprintf("\ndemo model, %v per chunk, %s per turn", d.Delay, plural(s.Steps[0].Followers, "follower"))
	}
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "concurrent turns"
	p.Y.Label.Text = "latency (ms)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	var xt []plot.Tick
	for _, r := range s.Steps {
		xt = append(xt, plot.Tick{Value: float64(r.Turns), Label: strconv.Itoa(r.Turns)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	// Latency grows with load, so the bottom right corner is free.
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), vg.Points(8)

	blue := []color.RGBA{{R: 0x9e, G: 0xca, B: 0xe1, A: 255}, {R: 0x42, G: 0x92, B: 0xc6, A: 255}, {R: 0x08, G: 0x45, B: 0x94, A: 255}}
	orange := []color.RGBA{{R: 0xfd, G: 0xbe, B: 0x85, A: 255}, {R: 0xfd, G: 0x8d, B: 0x3c, A: 255}, {R: 0xa6, G: 0x36, B: 0x03, A: 255}}
	green := []color.RGBA{{R: 0xa1, G: 0xd9, B: 0x9b, A: 255}, {R: 0x41, G: 0xab, B: 0x5d, A: 255}, {R: 0x00, G: 0x6d, B: 0x2c, A: 255}}
	figures := []struct {
		name   string
		pick   func(*Report) Summary
		colors []color.RGBA // p50, p95, p99
		glyph  draw.GlyphDrawer
		dashes []vg.Length
	}{
		{"delivery", func(r *Report) Summary { return r.Delivery }, blue, draw.CircleGlyph{}, nil},
		{"first event", func(r *Report) Summary { return r.FirstEvent }, orange, draw.TriangleGlyph{}, []vg.Length{vg.Points(5), vg.Points(3)}},
		{"first token", func(r *Report) Summary { return r.FirstToken }, green, draw.SquareGlyph{}, []vg.Length{vg.Points(1.5), vg.Points(2.5)}},
	}
	lo, hi := 0.0, 0.0
	for _, f := range figures {
		for q, name := range []string{"p50", "p95", "p99"} {
			pts := make(plotter.XYs, len(s.Steps))
			for i, r := range s.Steps {
				sum := f.pick(r)
				// A log scale cannot show 0: a step without data sits at 1 µs.
				y := max(float64([]time.Duration{sum.P50, sum.P95, sum.P99}[q])/1e6, 0.001)
				pts[i] = plotter.XY{X: float64(r.Turns), Y: y}
				if lo == 0 || y < lo {
					lo = y
				}
				hi = max(hi, y)
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			line.Color, points.Color = f.colors[q], f.colors[q]
			line.Width = vg.Points(1.5)
			line.Dashes, points.Shape = f.dashes, f.glyph
			p.Add(line, points)
			p.Legend.Add(f.name+" "+name, line, points)
		}
	}
	p.Y.Min, p.Y.Max = lo/2, hi*1.5
	xlo, xhi := float64(s.Steps[0].Turns), float64(s.Steps[0].Turns)
	for _, r := range s.Steps {
		xlo, xhi = min(xlo, float64(r.Turns)), max(xhi, float64(r.Turns))
	}
	p.X.Min, p.X.Max = xlo/1.5, xhi*1.5
	wt, err := p.WriterTo(9*vg.Inch, 5.5*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// logTicks marks 1, 2 and 5 times each power of ten with a label, the
// other multiples without: a log axis readable over a small range too.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for dec := math.Pow(10, math.Floor(math.Log10(lo))); dec <= hi; dec *= 10 {
		for m := 1.0; m < 10; m++ {
			v := dec * m
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// plural writes n and noun, with an s when n is not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
