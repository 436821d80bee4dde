package webui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft"
)

// Charts are drawn on the server as SVG bars, one group of bars per
// interval and one bar per series in it, each bar a link: the dashboard's
// and a monitor's page share the drawing and its template ("bar_chart").

// chartHeight is the height of a chart's plot in SVG units.
const chartHeight = 120

// chartSlotWidth is the width of one interval's bars in SVG units.
const chartSlotWidth = 24

// chartStyles is how many series the stylesheet colours (.series-0 …).
const chartStyles = 8

// chartRanges are the ranges the charts show, each with the width of its
// intervals; the first is the default.
var chartRanges = []struct {
	Name  string
	Span  time.Duration
	Width time.Duration
}{{"24h", 24 * time.Hour, time.Hour}, {"7d", 7 * 24 * time.Hour, 6 * time.Hour}, {"30d", 30 * 24 * time.Hour, 24 * time.Hour}}

// chartRange is a range the charts show: Span up to the end of the
// interval now is in, in intervals of Width.
type chartRange struct {
	Name     string
	From, To time.Time
	Width    time.Duration
}

// chartRangeOf resolves a page's ?range= (the first of chartRanges when
// empty) at now.
func chartRangeOf(name string, now time.Time) (chartRange, error) {
	for _, d := range chartRanges {
		if d.Name == name || name == "" {
			to := now.UTC().Truncate(d.Width).Add(d.Width)
			return chartRange{Name: d.Name, From: to.Add(-d.Span), To: to, Width: d.Width}, nil
		}
	}
	return chartRange{}, weft.Errorf(errBadView, "range: one of %s", strings.Join(chartRangeNames(), ", "))
}

// chartRangeNames are the names of chartRanges, in order.
func chartRangeNames() []string {
	names := make([]string, len(chartRanges))
	for i, d := range chartRanges {
		names[i] = d.Name
	}
	return names
}

// chart is one metric over the intervals, a bar per interval and series.
type chart struct {
	ID, Title string
	Unit      unit
	Max       string // the highest value, as text
	Width     int    // of the SVG
	Bars      []chartBar
	Series    []string // the groups, in their bars' order
}

// Scale is the chart's highest value with its unit, as its caption says it.
func (c *chart) Scale() string { return c.Unit.of(c.Max) }

// unit is what a chart's values count or measure: a noun's two forms
// ("trace", "traces"), or a symbol that has one ("ms"), or none.
type unit struct{ one, many string }

// countOf is the unit of a count of noun ("trace"): "traces" but "1 trace".
func countOf(noun string) unit { return unit{noun, noun + "s"} }

// of writes value (as formatted) with the unit.
func (u unit) of(value string) string {
	word := u.many
	if value == "1" && u.one != "" {
		word = u.one
	}
	if word == "" {
		return value
	}
	return value + " " + word
}

// chartBar is one interval's value of one series, drawn at X with height H.
type chartBar struct {
	X, Y, W, H float64
	Series     int
	Label      string // what the bar says to a screen reader and on hover
	Href       string // the trace list filtered to the bar's traces
}

// plot lays out c's bars from values[slot][series], each interval's bars
// side by side and scaled to the highest value; a value that is NaN, zero
// or negative draws no bar. bar names each drawn bar (its value as format
// writes it) and links it.
func (c *chart) plot(values [][]float64, format func(float64) string, bar func(slot, series int, value string) (label, href string)) {
	c.Width = len(values) * chartSlotWidth
	top := 0.0
	for _, row := range values {
		for _, v := range row {
			if !math.IsNaN(v) {
				top = max(top, v)
			}
		}
	}
	c.Max = format(top)
	barWidth := float64(chartSlotWidth-4) / float64(max(len(c.Series), 1))
	for slot, row := range values {
		for s, v := range row {
			if math.IsNaN(v) || v <= 0 || top <= 0 {
				continue
			}
			hgt := max(v/top*chartHeight, 1)
			label, href := bar(slot, s, format(v))
			c.Bars = append(c.Bars, chartBar{X: float64(slot*chartSlotWidth+2) + float64(s)*barWidth, Y: chartHeight - hgt, W: barWidth, H: hgt,
				Series: s % chartStyles, Label: label, Href: href})
		}
	}
}

// formatNumber is a count or measure without needless digits.
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
