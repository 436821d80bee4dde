package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"text/tabwriter"

	"github.com/weftlabs/weft/transport/httpapi"
)

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print the version and build information (also: -version, --version)",
		about: "Print the version of the program and how it was built: its module and version, the\n" +
			"revision, time and state of the source tree it was built from (when built from a\n" +
			"checkout), the Go version and the platform.",
		setup: func(*flag.FlagSet) action {
			return func(_ context.Context, out io.Writer, _ []string) error {
				info, _ := debug.ReadBuildInfo()
				writeVersion(out, info)
				return nil
			}
		},
	}
}

// writeVersion prints the build information Go records in every binary. info
// is nil when the binary carries none.
func writeVersion(w io.Writer, info *debug.BuildInfo) {
	version, module := "unknown", "unknown"
	settings := map[string]string{}
	goVersion := runtime.Version()
	if info != nil {
		version, module, goVersion = info.Main.Version, info.Main.Path, info.GoVersion
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
	}
	fmt.Fprintf(w, "%s %s\n", programName, version)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	line := func(key, value string) {
		if value != "" {
			fmt.Fprintf(tw, "%s\t%s\n", key, value)
		}
	}
	line("module", module)
	line("revision", settings["vcs.revision"])
	line("time", settings["vcs.time"])
	line("modified", settings["vcs.modified"])
	line("go", goVersion)
	line("platform", runtime.GOOS+"/"+runtime.GOARCH)
	line("trace server API", httpapi.Version)
}
