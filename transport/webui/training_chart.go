package webui

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
)

// chartData is what a training chart draws, written into the page as JSON (a
// script element of type application/json, read by static/training.js): one small chart per metric,
// one line per run, all sharing the steps X. Values are null where a run has
// no value at a step. The server aligns the runs so that the browser only
// plots.
type chartData struct {
	// Runs names the lines, in the order of every Metric's Values.
	Runs []string `json:"runs"`
	// X are the steps, ascending.
	X       []int64       `json:"x"`
	Metrics []chartMetric `json:"metrics"`
	// Markers are steps drawn as vertical lines (saved checkpoints).
	Markers []int64 `json:"markers"`
	// StepURL, when set, is where a click on step s goes: StepURL + s.
	StepURL string `json:"step_url,omitempty"`
}

// chartMetric is one metric's lines: Values[run][i] is at X[i].
type chartMetric struct {
	Name   string        `json:"name"`
	Values []chartColumn `json:"values"`
}

// chartColumn is one run's values of a metric by step, NaN where the run has
// none (written as null). A page of 10,000 steps carries tens of thousands
// of them, so they are plain floats written directly, not pointers through
// reflection.
type chartColumn []float64

// MarshalJSON writes the column as an array of numbers in their shortest
// exact form, null for NaN.
func (c chartColumn) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(c)*12)
	b = append(b, '[')
	for i, v := range c {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, ']'), nil
}

// chartRun is one run's points before alignment, column by column: Steps
// ascending, and each metric's value at Steps[i] (NaN where none).
type chartRun struct {
	Label  string
	Steps  []int64
	Values map[string]chartColumn
}

func newChartRun(label string) chartRun {
	return chartRun{Label: label, Values: map[string]chartColumn{}}
}

// add appends a step, after every step already added, with its metrics
// (copied: the map may be reused). Columns are padded with NaN lazily, here
// for the metrics of this step and in finish for the rest.
func (r *chartRun) add(step int64, metrics map[string]float64) {
	r.Steps = append(r.Steps, step)
	n := len(r.Steps)
	for name, v := range metrics {
		r.Values[name] = append(padded(r.Values[name], n-1), v)
	}
}

// finish pads every column to the run's steps.
func (r *chartRun) finish() {
	for name, col := range r.Values {
		r.Values[name] = padded(col, len(r.Steps))
	}
}

func padded(col chartColumn, n int) chartColumn {
	for len(col) < n {
		col = append(col, math.NaN())
	}
	return col
}

// preferredMetrics come first, in this order; the rest follow by name, with
// validation metrics ("val/…") ahead of the others.
var preferredMetrics = []string{"train/reward", "reward", "loss", "grad_norm", "learning_rate"}

// maxChartMetrics bounds how many charts a page draws.
const maxChartMetrics = 12

// buildChart aligns runs on the union of their steps and picks the metrics:
// the preferred ones any run has, then validation metrics, then the rest.
func buildChart(runs []chartRun, markers []int64) chartData {
	names := map[string]bool{}
	for i := range runs {
		runs[i].finish()
		for k := range runs[i].Values {
			names[k] = true
		}
	}
	d := chartData{X: unionSteps(runs), Markers: markers, Runs: make([]string, len(runs)), Metrics: []chartMetric{}}
	if d.Markers == nil {
		d.Markers = []int64{}
	}
	for i, r := range runs {
		d.Runs[i] = r.Label
	}
	for _, name := range orderMetrics(names) {
		m := chartMetric{Name: name, Values: make([]chartColumn, len(runs))}
		for i, r := range runs {
			m.Values[i] = aligned(r, r.Values[name], d.X)
		}
		d.Metrics = append(d.Metrics, m)
	}
	return d
}

// unionSteps merges the runs' ascending steps.
func unionSteps(runs []chartRun) []int64 {
	x := []int64{} // never null in the page
	if len(runs) == 1 {
		return append(x, runs[0].Steps...)
	}
	for _, r := range runs {
		x = append(x, r.Steps...)
	}
	slices.Sort(x)
	return slices.Compact(x)
}

// aligned is a run's column (nil when the run lacks the metric) placed on
// the steps x, a superset of the run's.
func aligned(r chartRun, col chartColumn, x []int64) chartColumn {
	if col != nil && len(r.Steps) == len(x) {
		return col
	}
	out := make(chartColumn, len(x))
	j := 0
	for i, s := range x {
		out[i] = math.NaN()
		for j < len(r.Steps) && r.Steps[j] < s {
			j++
		}
		if col != nil && j < len(r.Steps) && r.Steps[j] == s {
			out[i] = col[j]
		}
	}
	return out
}

func orderMetrics(names map[string]bool) []string {
	var out []string
	for _, p := range preferredMetrics {
		if names[p] {
			out = append(out, p)
		}
	}
	var val, rest []string
	for n := range names {
		switch {
		case slices.Contains(preferredMetrics, n):
		case len(n) > 4 && n[:4] == "val/":
			val = append(val, n)
		default:
			rest = append(rest, n)
		}
	}
	sort.Strings(val)
	sort.Strings(rest)
	out = append(append(out, val...), rest...)
	if len(out) > maxChartMetrics {
		out = out[:maxChartMetrics]
	}
	return out
}

// trainingFuncs are the template functions of the training pages.
func trainingFuncs() map[string]any {
	return map[string]any{
		"modelPath": modelPath,
		"jobPath":   jobPath,
		"shortID":   shortID,
		"metric":    formatMetric,
		"metricOf": func(m map[string]float64, name string) string {
			if v, ok := m[name]; ok {
				return formatMetric(v)
			}
			return "–"
		},
		"add64": func(a, b int64) int64 { return a + b },
	}
}

// formatMetric writes a metric with 4 significant digits ("0.5", "5e-06").
func formatMetric(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', 4, 64)
	case *float64:
		if x == nil {
			return "–"
		}
		return strconv.FormatFloat(*x, 'g', 4, 64)
	}
	return fmt.Sprint(v)
}
