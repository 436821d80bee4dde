package webui

import "html/template"

// traceViewFuncs are the template functions of the trace view, the detail
// pane and the diff page.
func traceViewFuncs(md *markdownRenderer) template.FuncMap {
	return template.FuncMap{
		"epochMS":   epochMS,
		"endMS":     endMS,
		"cost":      formatCost,
		"markdown":  md.html,
		"reactions": func() []string { return quickReactions },
		"truncate":  truncate,
		"opHref":    refHref,
	}
}
