package main

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"text/tabwriter"
	"time"
)

// report collects latencies and outcomes per route.
type report struct {
	mu      sync.Mutex
	routes  map[string]*routeStats
	elapsed time.Duration
}

type routeStats struct {
	latencies []time.Duration
	errors    int
	shed      int
	statuses  map[int]int
}

func newReport() *report { return &report{routes: map[string]*routeStats{}} }

func (r *report) stats(name string) *routeStats {
	s, ok := r.routes[name]
	if !ok {
		s = &routeStats{statuses: map[int]int{}}
		r.routes[name] = s
	}
	return s
}

func (r *report) record(name string, status int, latency time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats(name)
	s.latencies = append(s.latencies, latency)
	s.statuses[status]++
	if err != nil || status >= 400 {
		s.errors++
	}
}

func (r *report) shed(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats(name).shed++
}

// totalErrors counts failed requests and those shed because the generator
// had maxInFlight requests waiting: a run at the set rate counts both.
func (r *report) totalErrors() int {
	n := r.failures()
	for _, s := range r.routes {
		n += s.shed
	}
	return n
}

// failures counts requests that failed or were answered with a 4xx or 5xx.
func (r *report) failures() int {
	n := 0
	for _, s := range r.routes {
		n += s.errors
	}
	return n
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

func (r *report) print(w io.Writer) {
	names := make([]string, 0, len(r.routes))
	for n := range r.routes {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "route\trequests\treq/s\tp50\tp99\tmax\terrors\tshed\tstatuses\t")
	var all []time.Duration
	total, errs, shed := 0, 0, 0
	for _, n := range names {
		s := r.routes[n]
		sort.Slice(s.latencies, func(i, j int) bool { return s.latencies[i] < s.latencies[j] })
		all = append(all, s.latencies...)
		total += len(s.latencies)
		errs += s.errors
		shed += s.shed
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%s\t%d\t%d\t%v\t\n", n, len(s.latencies),
			float64(len(s.latencies))/r.elapsed.Seconds(), round(percentile(s.latencies, .5)),
			round(percentile(s.latencies, .99)), round(percentile(s.latencies, 1)), s.errors, s.shed, s.statuses)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	fmt.Fprintf(tw, "all\t%d\t%.1f\t%s\t%s\t%s\t%d\t%d\t\t\n", total, float64(total)/r.elapsed.Seconds(),
		round(percentile(all, .5)), round(percentile(all, .99)), round(percentile(all, 1)), errs, shed)
	tw.Flush()
	fmt.Fprintf(w, "elapsed %s\n", round(r.elapsed))
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}
