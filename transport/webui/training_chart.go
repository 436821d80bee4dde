package webui

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	// First are the metrics charted as soon as a run has them (a live page
	// adds their charts as they appear); Metrics are those of them the runs
	// have, or a few others when they have none of them.
	First []string `json:"first"`
	// More are the runs' other metrics, by name, charted on demand: their
	// values are read from MetricURL + the metric's name (query-escaped),
	// as a chartMetric with its own X.
	More      []string `json:"more"`
	MetricURL string   `json:"metric_url,omitempty"`
}

// metricValues is one metric of a chart read on demand: its values by run
// on the steps X (those of the chart when read, which a live page may have
// passed since).
type metricValues struct {
	X      []int64       `json:"x"`
	Values []chartColumn `json:"values"`
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

// What people look for first in a chart: of a model's checkpoints, the
// reward (of the training trajectories, then of validation), the loss, the
// gradient norm, the learning rate and the entropy; of a job's gradient
// steps the same, the step's reward being its batch's.
var (
	checkpointFirst = []string{"train/reward", "val/reward", "loss", "grad_norm", "learning_rate", "entropy"}
	stepFirst       = []string{"reward", "loss", "grad_norm", "learning_rate", "entropy"}
)

// fallbackCharts is how many other metrics are charted when the runs have
// none of the first ones (a trainer with names of its own).
const fallbackCharts = 4

// stepIndex is the number a trainer gives each gradient step: the chart's X,
// not a metric.
const stepIndex = "gradient_step"

// buildChart aligns runs on the union of their steps and charts the metrics
// of first that any run has (or, when none, the first fallbackCharts of the
// others); every other metric is listed in More.
func buildChart(runs []chartRun, markers []int64, first []string) chartData {
	names := map[string]bool{}
	for i := range runs {
		runs[i].finish()
		for k := range runs[i].Values {
			names[k] = true
		}
	}
	delete(names, stepIndex)
	var drawn []string
	for _, name := range first {
		if names[name] {
			drawn = append(drawn, name)
		}
	}
	more := otherMetrics(names, drawn)
	if len(drawn) == 0 {
		n := min(fallbackCharts, len(more))
		drawn, more = more[:n], more[n:]
	}
	d := alignedChart(runs, markers, drawn)
	d.First, d.More = first, more
	if d.First == nil {
		d.First = []string{}
	}
	return d
}

// alignedChart aligns runs on the union of their steps, with the columns
// of the metrics names.
func alignedChart(runs []chartRun, markers []int64, names []string) chartData {
	d := chartData{X: unionSteps(runs), Markers: markers, Runs: make([]string, len(runs)), Metrics: []chartMetric{}, More: []string{}}
	if d.Markers == nil {
		d.Markers = []int64{}
	}
	for i, r := range runs {
		d.Runs[i] = r.Label
	}
	for _, name := range names {
		m := chartMetric{Name: name, Values: make([]chartColumn, len(runs))}
		for i, r := range runs {
			m.Values[i] = aligned(r, r.Values[name], d.X)
		}
		d.Metrics = append(d.Metrics, m)
	}
	return d
}

// metricOf is one metric of runs, aligned as their chart aligns it.
func metricOf(runs []chartRun, name string) metricValues {
	for i := range runs {
		runs[i].finish()
	}
	d := alignedChart(runs, nil, []string{name})
	return metricValues{X: d.X, Values: d.Metrics[0].Values}
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

// otherMetrics are the names not drawn, validation metrics ("val/…")
// first, each part by name.
func otherMetrics(names map[string]bool, drawn []string) []string {
	var val, rest []string
	for n := range names {
		switch {
		case slices.Contains(drawn, n):
		case strings.HasPrefix(n, "val/"):
			val = append(val, n)
		default:
			rest = append(rest, n)
		}
	}
	sort.Strings(val)
	sort.Strings(rest)
	return append(append([]string{}, val...), rest...)
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
