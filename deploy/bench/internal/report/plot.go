package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/zcustody/suite/deploy/bench/internal/measure"
	"github.com/zcustody/suite/deploy/bench/internal/scenario"
)

var layerColors = map[string]color.Color{
	scenario.LayerGateway: color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	scenario.LayerDirect:  color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	scenario.LayerRaw:     color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

// LatencyPlot writes a PNG with one panel per scenario: p50 (solid) and p99 (dashed) latency
// of each layer against concurrency, both axes logarithmic.
func (r Results) LatencyPlot(path string) error {
	var panels []*plot.Plot
	for _, s := range r.Scenarios {
		p, err := s.latencyPanel()
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	return savePanels(path, panels, 560)
}

func (s Scenario) latencyPanel() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = s.Name + ": latency against concurrency"
	p.X.Label.Text = "concurrency (workers)"
	p.Y.Label.Text = "latency (ms)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = oneTwoFive{}
	var ticks []plot.Tick
	for _, c := range concurrencies(s.Points) {
		ticks = append(ticks, plot.Tick{Value: float64(c), Label: fmt.Sprint(c)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Legend.Top, p.Legend.Left = true, true
	for _, layer := range []string{scenario.LayerGateway, scenario.LayerDirect, scenario.LayerRaw} {
		for _, q := range []struct {
			name   string
			get    func(measure.Point) time.Duration
			dashed bool
		}{{"p50", func(p measure.Point) time.Duration { return p.P50 }, false}, {"p99", func(p measure.Point) time.Duration { return p.P99 }, true}} {
			line, err := s.latencyLine(layer, q.get)
			if err != nil {
				return nil, err
			}
			line.Color = layerColors[layer]
			line.Width = vg.Points(1.5)
			if q.dashed {
				line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(line)
			p.Legend.Add(layer+" "+q.name, line)
		}
	}
	widen(&p.X)
	widen(&p.Y)
	return p, nil
}

// widen gives a logarithmic axis whose data is one value (a run at one concurrency) a range
// around it: a log scale cannot draw an empty range.
func widen(ax *plot.Axis) {
	if ax.Min >= ax.Max && ax.Min > 0 {
		ax.Min, ax.Max = ax.Min/2, ax.Max*2
	}
}

func (s Scenario) latencyLine(layer string, get func(measure.Point) time.Duration) (*plotter.Line, error) {
	var xys plotter.XYs
	for _, p := range s.Points {
		if p.Layer == layer && get(p) > 0 {
			xys = append(xys, plotter.XY{X: float64(p.Concurrency), Y: float64(get(p)) / float64(time.Millisecond)})
		}
	}
	line, err := plotter.NewLine(xys)
	if err != nil {
		return nil, fmt.Errorf("plot %s %s: %w", s.Name, layer, err)
	}
	return line, nil
}

// OverloadPlot writes a PNG of the overload attack second by second: answered, shed and other
// requests per second with the offered rate, and the 99th percentile latency of the answered
// and of the shed requests.
func OverloadPlot(path string, o measure.OverloadResult) error {
	counts, err := overloadCounts(o)
	if err != nil {
		return err
	}
	latency, err := overloadLatency(o)
	if err != nil {
		return err
	}
	return savePanels(path, []*plot.Plot{counts, latency}, 620)
}

// perSecond is one series of the overload attack, second by second across the phases.
func perSecond(o measure.OverloadResult, get func(measure.Second) (float64, bool)) plotter.XYs {
	var xys plotter.XYs
	var at float64
	for _, ph := range o.Phases {
		for i, sec := range ph.Seconds {
			if y, ok := get(sec); ok {
				xys = append(xys, plotter.XY{X: at + float64(i) + 0.5, Y: y})
			}
		}
		at += ph.Duration.Seconds()
	}
	return xys
}

func overloadLatency(o measure.OverloadResult) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "overload: p99 latency by second sent"
	p.X.Label.Text = "second of the attack"
	p.Y.Label.Text = "latency (ms)"
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, oneTwoFive{}
	p.Legend.Top = true
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, s := range []struct {
		name string
		get  func(measure.Second) (float64, bool)
		c    color.Color
	}{
		{"ok p99", func(s measure.Second) (float64, bool) { return ms(s.OKP99), s.OKP99 > 0 }, layerColors[scenario.LayerRaw]},
		{"shed p99", func(s measure.Second) (float64, bool) { return ms(s.ShedP99), s.ShedP99 > 0 }, color.RGBA{R: 0xff, G: 0x7f, A: 0xff}},
	} {
		if err := addLine(p, s.name, perSecond(o, s.get), s.c, false); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func overloadCounts(o measure.OverloadResult) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("overload: gateway read at 2× then 0.5× capacity (%.0f req/s)", o.Capacity)
	p.X.Label.Text = "second of the attack"
	p.Y.Label.Text = "requests per second (by send time)"
	p.Legend.Top = true
	series := []struct {
		name string
		get  func(measure.Second) int
		c    color.Color
	}{
		{"ok (2xx)", func(s measure.Second) int { return s.OK }, layerColors[scenario.LayerRaw]},
		{"shed (429/503)", func(s measure.Second) int { return s.Shed }, color.RGBA{R: 0xff, G: 0x7f, A: 0xff}},
		{"other (5xx, timeouts)", func(s measure.Second) int { return s.Other }, layerColors[scenario.LayerGateway]},
	}
	offered := plotter.XYs{}
	var at float64
	for _, ph := range o.Phases {
		offered = append(offered, plotter.XY{X: at, Y: ph.Rate}, plotter.XY{X: at + ph.Duration.Seconds(), Y: ph.Rate})
		at += ph.Duration.Seconds()
	}
	if err := addLine(p, "offered", offered, color.Gray{Y: 0x80}, true); err != nil {
		return nil, err
	}
	for _, s := range series {
		xys := perSecond(o, func(sec measure.Second) (float64, bool) { return float64(s.get(sec)), true })
		if err := addLine(p, s.name, xys, s.c, false); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func addLine(p *plot.Plot, name string, xys plotter.XYs, c color.Color, dashed bool) error {
	if len(xys) == 0 {
		return nil
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	line.Color, points.Color = c, c
	line.Width = vg.Points(1.5)
	if dashed {
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		points.Radius = 0
	}
	p.Add(line, points)
	p.Legend.Add(name, line)
	return nil
}

// savePanels draws the plots side by side, each width points wide, into a PNG.
func savePanels(path string, panels []*plot.Plot, width float64) error {
	if len(panels) == 0 {
		return nil
	}
	img := vgimg.New(vg.Points(width*float64(len(panels))), vg.Points(420))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter * 8, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return f.Close()
}

// oneTwoFive labels a logarithmic axis at 1, 2 and 5 times each power of ten.
type oneTwoFive struct{}

// Ticks implements plot.Ticker.
func (oneTwoFive) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for decade := math.Pow(10, math.Floor(math.Log10(lo))); decade <= hi; decade *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := m * decade; v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}
