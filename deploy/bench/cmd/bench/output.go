package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zcustody/suite/deploy/bench/internal/report"
)

// Result files, in the output folder.
const (
	resultsFile  = "results.md"
	latencyFile  = "latency.png"
	overloadFile = "overload.png"
)

// write writes the markdown and the plots into the output folder and prints the markdown.
func (b *bench) write() error {
	if err := os.MkdirAll(b.cfg.Out, 0o750); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	var plots []string
	if len(b.res.Scenarios) > 0 {
		plots = append(plots, latencyFile)
		if err := b.res.LatencyPlot(filepath.Join(b.cfg.Out, latencyFile)); err != nil {
			return err
		}
	}
	if b.res.Overload != nil {
		plots = append(plots, overloadFile)
		if err := report.OverloadPlot(filepath.Join(b.cfg.Out, overloadFile), *b.res.Overload); err != nil {
			return err
		}
	}
	var md bytes.Buffer
	if err := b.res.Markdown(&md, plots...); err != nil {
		return err
	}
	path := filepath.Join(b.cfg.Out, resultsFile)
	if err := os.WriteFile(path, md.Bytes(), 0o640); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	fmt.Fprintf(b.out, "\n%s", md.Bytes())
	b.say("wrote %s, %s; the processes' logs are in %s", path, filepath.Join(b.cfg.Out, "*.png"), filepath.Join(b.cfg.Out, "work", "logs"))
	return nil
}
